//===- FuseLinearActivation.cpp - Activation as a matmul epilogue ---------===//

#include "dialects/tm/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tmc::tm {
#define GEN_PASS_DEF_TMFUSELINEARACTIVATION
#include "dialects/tm/Passes.h.inc"
} // namespace tmc::tm

using namespace mlir;
using namespace tmc::tm;

namespace {

/// activation(linear(x, w, b)) -> linear(x, w, b) {activation = kind}, when the
/// linear has no other user and no epilogue yet.
struct FoldActivationIntoLinear : OpRewritePattern<ActivationOp> {
  FoldActivationIntoLinear(MLIRContext *context, bool explain)
      : OpRewritePattern(context), explain(explain) {}
  bool explain;

  LogicalResult matchAndRewrite(ActivationOp activation,
                                PatternRewriter &rewriter) const override {
    auto linear = activation.getInput().getDefiningOp<LinearOp>();
    // The activation applies before a fused residual, so that one must not be there.
    if (!linear || linear.getActivation() != "none" || linear.getResidual() ||
        !linear->hasOneUse())
      return rewriter.notifyMatchFailure(activation, "input is not a plain linear");
    auto fused = rewriter.create<LinearOp>(
        rewriter.getFusedLoc({linear.getLoc(), activation.getLoc()}),
        activation.getType(), linear.getInput(), linear.getWeight(),
        linear.getBias(), Value(), activation.getKindAttr(), linear.getPrecisionAttr());
    if (explain)
      emitRemark(activation.getLoc())
          << originPrefix(activation.getLoc()) << "fused " << activation.getKind() << " into the tm.linear before it, as its epilogue";
    rewriter.replaceOp(activation, fused.getResult());
    rewriter.eraseOp(linear);
    return success();
  }
};

struct FuseLinearActivationPass
    : tmc::tm::impl::TMFuseLinearActivationBase<FuseLinearActivationPass> {
  using tmc::tm::impl::TMFuseLinearActivationBase<FuseLinearActivationPass>::TMFuseLinearActivationBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldActivationIntoLinear>(&getContext(), explain);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (!explain)
      return;
    // Every activation still standing was a fusion declined: say why.
    getOperation().walk([](ActivationOp activation) {
      auto linear = activation.getInput().getDefiningOp<LinearOp>();
      InFlightDiagnostic remark = emitRemark(activation.getLoc());
      remark << originPrefix(activation.getLoc()) << "not fused into a matmul epilogue: ";
      Operation *producer = activation.getInput().getDefiningOp();
      if (!linear)
        remark << "its input comes from "
               << (producer ? producer->getName().getStringRef() : StringRef("an argument"))
               << ", not a tm.linear";
      else if (linear.getActivation() != "none")
        remark << "the tm.linear already ends in " << linear.getActivation();
      else if (linear.getResidual())
        remark << "the tm.linear already adds a residual, which comes after any activation";
      else
        remark << "the tm.linear's result has another user, which needs it before the activation";
    });
  }
};

} // namespace
