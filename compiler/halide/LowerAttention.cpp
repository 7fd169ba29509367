//===- LowerAttention.cpp - softmax(q k^T * scale + bias, masked) v -------===//
//
// One parallel task per (query tile, head): the scores of the tile against
// every key, their softmax and the weighted sum of values stay in tile-sized
// buffers, never a [heads, T, T] tensor. Keys are transposed per task so that
// the score loop vectorizes over keys; the value sum vectorizes over head_dim.
//
// Queries may be fewer than keys (a decoding step against the cache): query i
// then sits at position Tk - Tq + i. The mask is evaluated from positions, as
// a rule (tm::MaskAttr), never read from a materialized tensor.
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/AttentionMask.h"
#include "compiler/halide/Lowering.h"

#include <cmath>

using namespace Halide;

namespace tmc::halide {

LoweredKernel lowerAttention(const KernelDesc &kernel, const Schedule &schedule) {
  if (schedule.keyBlock > 0)
    return lowerAttentionBlocked(kernel, schedule);
  std::vector<BufferShape> sig = kernelSignature(kernel);
  const int headDim = static_cast<int>(kernel.headDim);
  const int group = static_cast<int>(kernel.heads / kernel.kvHeads);
  ImageParam q = makeInput(sig[0], "query"); // (d, h, i)
  ImageParam k = makeInput(sig[1], "key");   // (d, g, j)
  ImageParam v = makeInput(sig[2], "value"); // (d, g, j)
  Param<int32_t> length("length");           // padding: valid keys
  // Key and value rows are addressed by position, [stored, keys): a cache
  // bounded by a window holds them from its first position on (its view
  // starts there, View::startAt), any other from 0 (makeInput's min, which
  // Halide then folds into every index: the same code as without `stored`).
  if (kernel.windowKeys) {
    k.dim(2).set_min(Expr());
    v.dim(2).set_min(k.dim(2).min());
  }
  Expr queries = q.dim(2).extent(), stored = k.dim(2).min(), keys = stored + k.dim(2).extent();

  Var d("d"), h("h"), i("i"), j("j");
  RDom rd(0, headDim, "rd");

  // Scores past the last key (vector padding) read a clamped key and are
  // never consumed: the reductions below run over [stored, keys) only.
  Func keysT("keys_t");
  keysT(j, d, h) = keyValueElement(k(d, h / group, clamp(j, stored, keys - 1)), kernel);
  Func score("score");
  score(j, i, h) = 0.0f;
  score(j, i, h) += q(rd, h, i) * keysT(j, rd, h);

  Expr pos = keys - queries + i;
  Expr logit = score(j, i, h) * static_cast<float>(kernel.scale);
  if (kernel.mask.alibi)
    logit = logit + alibiBias(kernel.mask, kernel.heads, h, pos, j);
  // The mask is evaluated once per (key, query) and read twice.
  Func visible("visible");
  visible(j, i) = allowed(kernel.mask, pos, j, length);
  Func masked("masked_logit");
  masked(j, i, h) = select(visible(j, i), logit, Float(32).min());
  // Each reduction visits only the keys the mask can let through; `visible`
  // still decides exactly inside that range. Reading key clamp(r, first,
  // last), the same key under the predicate, lets bounds inference see that
  // a query tile needs only the keys its queries can see, so the scores and
  // weights of fully masked keys are never computed either.
  auto [firstKey, lastKey] = visibleKeys(kernel.mask, pos, length, stored, keys);
  auto seen = [&](RDom &r) {
    r.where(r >= firstKey && r <= lastKey);
    return clamp(r, firstKey, lastKey);
  };
  RDom rSeen(stored, keys - stored, "r_seen");
  Expr seenKey = seen(rSeen);
  Func rowMax("row_max");
  rowMax(i, h) = Float(32).min();
  rowMax(i, h) = max(rowMax(i, h), masked(seenKey, i, h));
  Func weight("weight");
  weight(j, i, h) = select(visible(j, i), exp(masked(j, i, h) - rowMax(i, h)), 0.0f);
  RDom rSum(stored, keys - stored, "r_sum");
  Expr sumKey = seen(rSum);
  Func rowSum("row_sum");
  rowSum(i, h) = 0.0f;
  rowSum(i, h) += weight(sumKey, i, h);
  RDom rAcc(stored, keys - stored, "r_acc");
  Expr accKey = seen(rAcc);
  Func acc("acc");
  acc(d, i, h) = 0.0f;
  acc(d, i, h) += weight(accKey, i, h) * keyValueElement(v(d, h / group, accKey), kernel);
  Func out("attention");
  // A query that may see no key yields zeros, never NaN.
  out(d, h, i) = select(rowSum(i, h) > 0.0f, acc(d, i, h) / rowSum(i, h), 0.0f);
  constrainOutput(out, sig.back());
  std::vector<Func> stages = {keysT, score, visible, masked, rowMax, weight, rowSum, acc, out};
  if (schedule.gpu) // scheduled by GpuSchedule.cpp (lowerKernel)
    return {out, kernel.mask.padding ? std::vector<Argument>{q, k, v, length}
                                     : std::vector<Argument>{q, k, v}, stages};

  const int vw = schedule.vectorWidth;
  const int dw = vectorWidthFor(headDim, vw);
  const TailStrategy dTail = vectorTail(headDim, dw);
  Var io("io"), ii("ii"), task("task");
  const bool decodeDots = schedule.queryTile == 1 && dw > 1 && headDim % dw == 0;
  // A serial decoding step's variant (decodeRowsAttentionSchedule: a
  // batched step runs its sequences in parallel, each on one thread) walks
  // the keys once for all heads: each key and value row read in full, one
  // row after the next, as the cache lies. Walked head by head, every row
  // is read a head's slice at a time, a stride apart: on the Zen 4, a probe
  // of the two walks over GPT-2 small's f16 caches (16 sequences of ~136
  // keys, 2 threads) moved 15-20 GB/s strided and 35-40 by whole rows, and
  // the 16-sequence step went from 29.5 to 25-26 ms with this variant.
  const bool headsInner = decodeDots && !schedule.parallel;
  out.split(i, io, ii, std::max(1, schedule.queryTile), TailStrategy::GuardWithIf)
      .reorder(d, ii, h, io);
  if (!headsInner)
    out.fuse(h, io, task);
  out.vectorize(d, dw, headDim % dw == 0 ? TailStrategy::Auto : TailStrategy::GuardWithIf);
  if (schedule.parallel)
    out.parallel(task);
  // Every stage is computed per task: one (query tile, head), or with the
  // heads inner one query and all its heads.
  const Var &at = headsInner ? io : task;

  // Rounding the key loops up to whole vectors (rather than shifting them
  // inwards) keeps short sequences (T < vector width) in bounds.
  const TailStrategy round = TailStrategy::RoundUp;
  if (decodeDots) {
    // One query per task (the decoding step's variant): its scores are dot
    // products along head_dim over the keys as stored, dw-lane partial sums
    // (headDim / dw FMAs per key) reduced across the lanes once per key. A
    // transpose first would cost as much as the products: each key is used
    // once. keys_t is inlined.
    RVar rdo("rdo"), rdi("rdi");
    Var lane("lane");
    score.compute_at(out, at);
    Func partial = score.update().split(rd, rdo, rdi, dw).rfactor(rdi, lane);
    if (headsInner)
      score.update().reorder(rdi, h, i, j);
    partial.compute_at(score, headsInner ? h : j).vectorize(lane);
    partial.update().vectorize(lane);
    score.update().atomic().vectorize(rdi);
  } else {
    keysT.compute_at(out, task).vectorize(j, vw, round);
    score.compute_at(out, task).vectorize(j, vw, round);
    score.update().reorder(j, rd, i).vectorize(j, vw, round);
  }
  visible.compute_at(out, at).vectorize(j, vw, round);
  masked.compute_at(out, at).vectorize(j, vw, round);
  rowMax.compute_at(out, at);
  weight.compute_at(out, at).vectorize(j, vw, round);
  rowSum.compute_at(out, at);
  acc.compute_at(out, at).vectorize(d, dw, dTail);
  if (headsInner) {
    // Per key, every head's weighted value row: the sums of all heads
    // (heads x head_dim floats) stay in cache, not in registers.
    Var dvo("dvo"), dvi("dvi");
    acc.update().split(d, dvo, dvi, dw).reorder(dvi, dvo, h, i, rAcc).vectorize(dvi).unroll(dvo);
  } else {
    acc.update().reorder(d, rAcc, i).vectorize(d, dw, dTail);
  }

  q.set_estimates({{0, headDim}, {0, static_cast<int>(kernel.heads)}, {0, 128}});
  k.set_estimates({{0, headDim}, {0, static_cast<int>(kernel.kvHeads)}, {0, 128}});
  v.set_estimates({{0, headDim}, {0, static_cast<int>(kernel.kvHeads)}, {0, 128}});
  out.set_estimates({{0, headDim}, {0, static_cast<int>(kernel.heads)}, {0, 128}});
  std::vector<Argument> args = {q, k, v};
  if (kernel.mask.padding)
    args.push_back(length);
  return {out, args, {keysT, score, visible, masked, rowMax, weight, rowSum, acc, out}};
}

} // namespace tmc::halide
