//===- LowerAttention.cpp - softmax(q k^T * scale) v as a Halide pipeline -===//
//
// One parallel task per (query tile, head): the scores of the tile against
// every key, their softmax and the weighted sum of values stay in tile-sized
// buffers, never a [heads, T, T] tensor. Keys are transposed per task so that
// the score loop vectorizes over keys; the value sum vectorizes over head_dim.
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/Lowering.h"

using namespace Halide;

namespace tmc::halide {

LoweredKernel lowerAttention(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  const int headDim = static_cast<int>(kernel.headDim);
  const int group = static_cast<int>(kernel.heads / kernel.kvHeads);
  ImageParam q = makeInput(sig[0], "query"); // (d, h, i)
  ImageParam k = makeInput(sig[1], "key");   // (d, g, j)
  ImageParam v = makeInput(sig[2], "value"); // (d, g, j)
  Expr tokens = k.dim(2).extent();

  Var d("d"), h("h"), i("i"), j("j");
  RDom rd(0, headDim, "rd");
  RDom rj(0, tokens, "rj");

  // Scores past the last key (vector padding) read a clamped key and are
  // never consumed: the reductions below run over [0, tokens) only.
  Func keysT("keys_t");
  keysT(j, d, h) = k(d, h / group, clamp(j, 0, tokens - 1));
  Func score("score");
  score(j, i, h) = 0.0f;
  score(j, i, h) += q(rd, h, i) * keysT(j, rd, h);
  Func rowMax("row_max");
  rowMax(i, h) = maximum(score(rj, i, h));
  const float scale = static_cast<float>(kernel.scale);
  Func weight("weight");
  weight(j, i, h) = exp((score(j, i, h) - rowMax(i, h)) * scale);
  Func rowSum("row_sum");
  rowSum(i, h) = sum(weight(rj, i, h));
  Func acc("acc");
  acc(d, i, h) = 0.0f;
  acc(d, i, h) += weight(rj, i, h) * v(d, h / group, rj);
  Func out("attention");
  out(d, h, i) = acc(d, i, h) / rowSum(i, h);
  constrainOutput(out, sig.back());

  const int vw = schedule.vectorWidth;
  const int dw = vectorWidthFor(headDim, vw);
  const TailStrategy dTail =
      headDim % dw == 0 ? TailStrategy::RoundUp : TailStrategy::GuardWithIf;
  Var io("io"), ii("ii"), task("task");
  out.split(i, io, ii, std::max(1, schedule.queryTile), TailStrategy::GuardWithIf)
      .reorder(d, ii, h, io)
      .fuse(h, io, task)
      .vectorize(d, dw, headDim % dw == 0 ? TailStrategy::Auto : TailStrategy::GuardWithIf);
  if (schedule.parallel)
    out.parallel(task);

  // Rounding the key loops up to whole vectors (rather than shifting them
  // inwards) keeps short sequences (T < vector width) in bounds.
  const TailStrategy round = TailStrategy::RoundUp;
  keysT.compute_at(out, task).vectorize(j, vw, round);
  score.compute_at(out, task).vectorize(j, vw, round);
  score.update().reorder(j, rd, i).vectorize(j, vw, round);
  rowMax.compute_at(out, task);
  weight.compute_at(out, task).vectorize(j, vw, round);
  rowSum.compute_at(out, task);
  acc.compute_at(out, task).vectorize(d, dw, dTail);
  acc.update().reorder(d, rj, i).vectorize(d, dw, dTail);

  return {out, {q, k, v}, {keysT, score, rowMax, weight, rowSum, acc, out}};
}

} // namespace tmc::halide
