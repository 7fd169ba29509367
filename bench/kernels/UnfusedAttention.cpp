//===- UnfusedAttention.cpp - Attention as three kernels, for comparison --===//
//
// Each stage gets the schedule a competent unfused implementation would:
// GEMMs with vector x row register tiles (as tmc's own GEMMs), the softmax
// vectorized along a row, every stage parallel over heads. Only the fusion,
// the online softmax and the causal skipping of the fused kernel are missing.
//
//===----------------------------------------------------------------------===//

#include "bench/kernels/UnfusedAttention.h"

using namespace Halide;

namespace tmc::bench {

namespace {

ImageParam input(const std::string &name, std::vector<int> staticExtents) {
  // Dimension 0 innermost; the last dimension (or two, for scores) are T.
  ImageParam p(Float(32), 3, name);
  Expr stride = 1;
  for (int dim = 0; dim < 3; ++dim) {
    p.dim(dim).set_min(0).set_stride(stride);
    if (staticExtents[dim] > 0)
      p.dim(dim).set_extent(staticExtents[dim]);
    stride = stride * p.dim(dim).extent();
  }
  return p;
}

} // namespace

halide::LoweredKernel lowerScores(int heads, int headDim, float scale, int vw) {
  ImageParam q = input("query", {headDim, heads, 0}), k = input("key", {headDim, heads, 0});
  Expr T = q.dim(2).extent();
  Var j("j"), i("i"), h("h"), d("d"), jo("jo"), io("io"), ji("ji"), ii("ii");
  RDom rd(0, headDim, "rd");
  Func keysT("keys_t");
  keysT(j, d, h) = k(d, h, clamp(j, 0, T - 1));
  Func prod("prod");
  prod(j, i, h) = 0.0f;
  prod(j, i, h) += q(rd, h, i) * keysT(j, rd, h);
  Func scores("scores");
  scores(j, i, h) = prod(j, i, h) * scale;
  // (Tiles shift inwards at the edges: the bench runs T >= 128.)
  // 4 vectors x 6 rows of accumulators (AVX-512; 3 x 4 on AVX2, as tmc's GEMM).
  const int cols = (vw >= 16 ? 4 : 3) * vw, rows = vw >= 16 ? 6 : 4;
  scores.tile(j, i, jo, io, ji, ii, cols, rows, TailStrategy::ShiftInwards)
      .reorder(ji, ii, jo, io, h)
      .vectorize(ji, vw)
      .parallel(h);
  keysT.compute_at(scores, h).vectorize(j, vw, TailStrategy::RoundUp);
  prod.compute_at(scores, jo).vectorize(j, vw).unroll(i);
  prod.update().reorder(j, i, rd).vectorize(j, vw).unroll(i);
  return {scores, {q, k}, {keysT, prod, scores}};
}

halide::LoweredKernel lowerCausalSoftmax(int heads, int vw) {
  ImageParam s = input("scores", {0, 0, heads});
  Expr T = s.dim(0).extent();
  Var j("j"), i("i"), h("h");
  RDom r(0, T, "r");
  Func masked("masked");
  masked(j, i, h) = select(j <= i, s(clamp(j, 0, T - 1), i, h), Float(32).min());
  Func rowMax("row_max");
  rowMax(i, h) = Float(32).min();
  rowMax(i, h) = max(rowMax(i, h), masked(r, i, h));
  Func e("e");
  e(j, i, h) = select(j <= i, exp(masked(j, i, h) - rowMax(i, h)), 0.0f);
  Func rowSum("row_sum");
  rowSum(i, h) = 0.0f;
  rowSum(i, h) += e(r, i, h);
  Func probs("probs");
  probs(j, i, h) = e(j, i, h) / rowSum(i, h);
  probs.reorder(j, i, h).vectorize(j, vw, TailStrategy::GuardWithIf).parallel(h);
  // The row's max and sum reduce vector-wise, then across the lanes.
  masked.compute_at(probs, i).vectorize(j, vw, TailStrategy::RoundUp);
  rowMax.compute_at(probs, i);
  rowMax.update().atomic().vectorize(r, vw);
  e.compute_at(probs, i).vectorize(j, vw, TailStrategy::RoundUp);
  rowSum.compute_at(probs, i);
  rowSum.update().atomic().vectorize(r, vw);
  return {probs, {s}, {masked, rowMax, e, rowSum, probs}};
}

halide::LoweredKernel lowerWeightedSum(int heads, int headDim, int vw) {
  ImageParam p = input("probs", {0, 0, heads}), v = input("value", {headDim, heads, 0});
  Expr T = v.dim(2).extent();
  Var d("d"), h("h"), i("i"), io("io"), ii("ii");
  RDom rj(0, T, "rj");
  Func acc("acc");
  acc(d, i, h) = 0.0f;
  acc(d, i, h) += p(rj, i, h) * v(d, h, rj);
  Func out("weighted_sum");
  out(d, h, i) = acc(d, i, h);
  const int rows = vw >= 16 ? 6 : 4;
  out.split(i, io, ii, rows, TailStrategy::ShiftInwards)
      .reorder(d, ii, io, h)
      .vectorize(d, vw)
      .parallel(h);
  acc.compute_at(out, io).vectorize(d, vw).unroll(i);
  acc.update().reorder(d, i, rj).vectorize(d, vw).unroll(i);
  return {out, {p, v}, {acc, out}};
}

} // namespace tmc::bench
