//===- FuseEmbeddingPositions.cpp - Fold positions into the embedding -----===//

#include "dialects/tm/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tmc::tm {
#define GEN_PASS_DEF_TMFUSEEMBEDDINGPOSITIONS
#include "dialects/tm/Passes.h.inc"
} // namespace tmc::tm

using namespace mlir;
using namespace tmc::tm;

namespace {

/// add_positions(embed(tokens, table)) -> embed(tokens, table) {position = kind}
struct FoldPositionsIntoEmbed : OpRewritePattern<AddPositionsOp> {
  FoldPositionsIntoEmbed(MLIRContext *context, bool explain)
      : OpRewritePattern(context), explain(explain) {}
  bool explain;

  LogicalResult matchAndRewrite(AddPositionsOp positions,
                                PatternRewriter &rewriter) const override {
    auto embed = positions.getInput().getDefiningOp<EmbedOp>();
    if (!embed || embed.getPosition() != "none" || !embed->hasOneUse() ||
        embed.getOffset() != positions.getOffset())
      return rewriter.notifyMatchFailure(positions, "input is not a plain embed");
    auto fused = rewriter.create<EmbedOp>(
        rewriter.getFusedLoc({embed.getLoc(), positions.getLoc()}),
        positions.getType(), embed.getTokens(), embed.getOffset(), embed.getTable(),
        positions.getTable(), embed.getScaleAttr(), positions.getKindAttr());
    if (explain)
      emitRemark(positions.getLoc())
          << originPrefix(positions.getLoc()) << "fused the " << positions.getKind() << " positions into the embedding lookup";
    rewriter.replaceOp(positions, fused.getResult());
    rewriter.eraseOp(embed);
    return success();
  }
};

struct FuseEmbeddingPositionsPass
    : tmc::tm::impl::TMFuseEmbeddingPositionsBase<FuseEmbeddingPositionsPass> {
  using tmc::tm::impl::TMFuseEmbeddingPositionsBase<FuseEmbeddingPositionsPass>::TMFuseEmbeddingPositionsBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldPositionsIntoEmbed>(&getContext(), explain);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    if (!explain)
      return;
    getOperation().walk([](AddPositionsOp positions) {
      emitRemark(positions.getLoc())
          << originPrefix(positions.getLoc()) << "positions not fused into the embedding: their input is not a plain tm.embed "
             "at the same offset with no other user";
    });
  }
};

} // namespace
