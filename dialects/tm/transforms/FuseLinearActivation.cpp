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
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ActivationOp activation,
                                PatternRewriter &rewriter) const override {
    auto linear = activation.getInput().getDefiningOp<LinearOp>();
    if (!linear || linear.getActivation() != "none" || !linear->hasOneUse())
      return rewriter.notifyMatchFailure(activation, "input is not a plain linear");
    auto fused = rewriter.create<LinearOp>(
        rewriter.getFusedLoc({linear.getLoc(), activation.getLoc()}),
        activation.getType(), linear.getInput(), linear.getWeight(),
        linear.getBias(), activation.getKindAttr());
    rewriter.replaceOp(activation, fused.getResult());
    rewriter.eraseOp(linear);
    return success();
  }
};

struct FuseLinearActivationPass
    : tmc::tm::impl::TMFuseLinearActivationBase<FuseLinearActivationPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldActivationIntoLinear>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
