//===- FuseLinearResidual.cpp - Residual add folded into a GEMM epilogue --===//
//
// A pre-norm block ends each sublayer in x + linear(h): the residual stream
// is read once more and written once more just to form the sum. Folding the
// add into the projection lets the GEMM add x while its output tile is still
// in registers. (Post-norm blocks fuse that add into the norm instead; see
// FuseResidualNorm.cpp, which runs first.)
//
//===----------------------------------------------------------------------===//

#include "dialects/tm/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tmc::tm {
#define GEN_PASS_DEF_TMFUSELINEARRESIDUAL
#include "dialects/tm/Passes.h.inc"
} // namespace tmc::tm

using namespace mlir;
using namespace tmc::tm;

namespace {

/// The linear feeding `operand` when it can absorb the add: used only there
/// and not already carrying a residual.
LinearOp absorbable(Value operand) {
  auto linear = operand.getDefiningOp<LinearOp>();
  return linear && !linear.getResidual() && linear->hasOneUse() ? linear : LinearOp();
}

/// add(x, linear(h)) -> linear(h) residual x, either operand order.
struct FoldAddIntoLinear : OpRewritePattern<AddOp> {
  FoldAddIntoLinear(MLIRContext *context, bool explain)
      : OpRewritePattern(context), explain(explain) {}
  bool explain;

  LogicalResult matchAndRewrite(AddOp add, PatternRewriter &rewriter) const override {
    Value residual = add.getLhs();
    LinearOp linear = absorbable(add.getRhs());
    if (!linear) {
      residual = add.getRhs();
      linear = absorbable(add.getLhs());
    }
    if (!linear)
      return rewriter.notifyMatchFailure(add, "no operand is a single-use tm.linear");
    auto fused = rewriter.create<LinearOp>(
        rewriter.getFusedLoc({linear.getLoc(), add.getLoc()}), add.getType(),
        linear.getInput(), linear.getWeight(), linear.getBias(), residual,
        linear.getActivationAttr(), linear.getPrecisionAttr());
    if (explain)
      emitRemark(add.getLoc()) << originPrefix(add.getLoc())
                               << "fused the residual add into the tm.linear before it, as "
                                  "its epilogue";
    rewriter.replaceOp(add, fused.getResult());
    rewriter.eraseOp(linear);
    return success();
  }
};

struct FuseLinearResidualPass
    : tmc::tm::impl::TMFuseLinearResidualBase<FuseLinearResidualPass> {
  using tmc::tm::impl::TMFuseLinearResidualBase<FuseLinearResidualPass>::
      TMFuseLinearResidualBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldAddIntoLinear>(&getContext(), explain);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (!explain)
      return;
    // Every add still standing was a fusion declined: say why.
    getOperation().walk([](AddOp add) {
      InFlightDiagnostic remark = emitRemark(add.getLoc());
      remark << originPrefix(add.getLoc()) << "residual add not fused into a matmul epilogue: ";
      auto lhs = add.getLhs().getDefiningOp<LinearOp>(), rhs = add.getRhs().getDefiningOp<LinearOp>();
      if (!lhs && !rhs)
        remark << "neither operand comes from a tm.linear";
      else
        remark << "the tm.linear's result has another user, which needs it without the sum";
    });
  }
};

} // namespace
