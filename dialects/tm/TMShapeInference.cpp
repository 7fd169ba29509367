//===- TMShapeInference.cpp - Result shapes of the tm operations ----------===//
//
// The shape algebra of each op, stated once for inference; the verifiers in
// TMOps.cpp check the same relations on IR whose types are already given.
//
//===----------------------------------------------------------------------===//

#include "dialects/tm/TMOps.h"

using namespace mlir;
using namespace tmc::tm;

#include "dialects/tm/TMInterfaces.cpp.inc"

namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

int64_t dimOf(Value value, unsigned index) {
  auto type = cast<ShapedType>(value.getType());
  return type.hasRank() && index < type.getRank() ? type.getDimSize(index) : kDynamic;
}

/// The better known of two sizes of one dimension: a static size wins over a
/// dynamic one (two different static sizes are the verifier's to report).
int64_t join(int64_t a, int64_t b) { return ShapedType::isDynamic(a) ? b : a; }

SmallVector<int64_t, 2> shapeOf(Value value) { return {dimOf(value, 0), dimOf(value, 1)}; }

SmallVector<int64_t, 2> joinShapes(Value a, Value b) {
  return {join(dimOf(a, 0), dimOf(b, 0)), join(dimOf(a, 1), dimOf(b, 1))};
}

} // namespace

SmallVector<int64_t, 2> EmbedOp::inferResultShape() {
  return {dimOf(getTokens(), 0), dimOf(getTable(), 1)};
}

SmallVector<int64_t, 2> AddSegmentsOp::inferResultShape() {
  return {dimOf(getInput(), 0), join(dimOf(getInput(), 1), dimOf(getTable(), 1))};
}

SmallVector<int64_t, 2> AddPositionsOp::inferResultShape() {
  int64_t width = dimOf(getInput(), 1);
  if (getTable())
    width = join(width, dimOf(getTable(), 1));
  return {dimOf(getInput(), 0), width};
}

SmallVector<int64_t, 2> LinearOp::inferResultShape() {
  SmallVector<int64_t, 2> shape = {dimOf(getInput(), 0), dimOf(getWeight(), 0)};
  if (getResidual())
    shape = {join(shape[0], dimOf(getResidual(), 0)), join(shape[1], dimOf(getResidual(), 1))};
  return shape;
}

SmallVector<int64_t, 2> AttentionOp::inferResultShape() {
  return {dimOf(getQuery(), 0), static_cast<int64_t>(getHeads() * getHeadDim())};
}

SmallVector<int64_t, 2> AddOp::inferResultShape() { return joinShapes(getLhs(), getRhs()); }

SmallVector<int64_t, 2> ActivationOp::inferResultShape() { return shapeOf(getInput()); }

SmallVector<int64_t, 2> NormOp::inferResultShape() {
  return {dimOf(getInput(), 0), join(dimOf(getInput(), 1), dimOf(getWeight(), 0))};
}

SmallVector<int64_t, 2> AddNormOp::inferResultShape() {
  SmallVector<int64_t, 2> shape = joinShapes(getInput(), getResidual());
  shape[1] = join(shape[1], dimOf(getWeight(), 0));
  return shape;
}

SmallVector<int64_t, 2> RopeOp::inferResultShape() {
  return {dimOf(getInput(), 0), static_cast<int64_t>(getHeads() * getHeadDim())};
}

SmallVector<int64_t, 2> GatedActivationOp::inferResultShape() {
  return joinShapes(getGate(), getUp());
}

SmallVector<int64_t, 2> CacheAppendOp::inferResultShape() {
  // offset + T rows: known only at run time.
  return {kDynamic, dimOf(getInput(), 1)};
}

SmallVector<int64_t, 2> SeqProjectOp::inferResultShape() {
  return {dimOf(getProjection(), 0), dimOf(getInput(), 1)};
}

SmallVector<int64_t, 2> PoolOp::inferResultShape() { return {1, dimOf(getInput(), 1)}; }
