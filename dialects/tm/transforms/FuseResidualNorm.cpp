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
  FuseAddIntoNorm(MLIRContext *context, bool explain)
      : OpRewritePattern(context), explain(explain) {}
  bool explain;

  LogicalResult matchAndRewrite(NormOp norm,
                                PatternRewriter &rewriter) const override {
    auto add = norm.getInput().getDefiningOp<AddOp>();
    if (!add || !add->hasOneUse())
      return rewriter.notifyMatchFailure(norm, "input is not a single-use add");
    auto fused = rewriter.create<AddNormOp>(
        rewriter.getFusedLoc({add.getLoc(), norm.getLoc()}), norm.getType(),
        add.getLhs(), add.getRhs(), norm.getWeight(), norm.getBias(),
        norm.getKindAttr(), norm.getEpsAttr());
    if (explain)
      emitRemark(norm.getLoc()) << originPrefix(norm.getLoc()) << "fused the residual add into this " << norm.getKind();
    rewriter.replaceOp(norm, fused.getResult());
    rewriter.eraseOp(add);
    return success();
  }
};

struct FuseResidualNormPass : tmc::tm::impl::TMFuseResidualNormBase<FuseResidualNormPass> {
  using tmc::tm::impl::TMFuseResidualNormBase<FuseResidualNormPass>::TMFuseResidualNormBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseAddIntoNorm>(&getContext(), explain);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (!explain)
      return;
    getOperation().walk([](NormOp norm) {
      if (auto add = norm.getInput().getDefiningOp<AddOp>())
        emitRemark(norm.getLoc())
            << originPrefix(norm.getLoc()) << "residual add not fused into this " << norm.getKind()
            << ": the sum is also used elsewhere (a pre-norm residual stream)";
    });
  }
};

} // namespace
