//===- FuseResidualNorm.cpp - Residual add fused into the layer norm ------===//

#include "dialects/tm/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tmc::tm {
#define GEN_PASS_DEF_TMFUSERESIDUALNORM
#include "dialects/tm/Passes.h.inc"
} // namespace tmc::tm

using namespace mlir;
using namespace tmc::tm;

namespace {

/// norm(add(x, r)) -> add_norm(x, r) when the sum is used only by the norm (a
/// pre-norm stack keeps the sum as its residual stream, so there the add stays).
struct FuseAddIntoNorm : OpRewritePattern<NormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(NormOp norm,
                                PatternRewriter &rewriter) const override {
    auto add = norm.getInput().getDefiningOp<AddOp>();
    if (!add || !add->hasOneUse())
      return rewriter.notifyMatchFailure(norm, "input is not a single-use add");
    auto fused = rewriter.create<AddNormOp>(
        rewriter.getFusedLoc({add.getLoc(), norm.getLoc()}), norm.getType(),
        add.getLhs(), add.getRhs(), norm.getWeight(), norm.getBias(),
        norm.getKindAttr(), norm.getEpsAttr());
    rewriter.replaceOp(norm, fused.getResult());
    rewriter.eraseOp(add);
    return success();
  }
};

struct FuseResidualNormPass : tmc::tm::impl::TMFuseResidualNormBase<FuseResidualNormPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseAddIntoNorm>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
