//===- LowerLinear.cpp - y = act(x W^T + b) as a Halide pipeline ----------===//
//
// The weight arrives as PyTorch stores it, [out, in]. It is transposed into
// `packed(n, k)` so that a row of the output tile is contiguous and the inner
// loop is a broadcast of x times a vector of weights into register-held
// accumulators (tileCols x tileRows). Packing per call costs one pass over the
// weights; packing once at load time is the tuning work of a later stage.
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/Lowering.h"

using namespace Halide;

namespace tmc::halide {

LoweredKernel lowerLinear(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  const int K = static_cast<int>(kernel.inWidth), N = static_cast<int>(kernel.width);
  ImageParam x = makeInput(sig[0], "x");      // (k, t)
  ImageParam w = makeInput(sig[1], "weight"); // (k, n)
  std::vector<Argument> args = {x, w};
  ImageParam b;
  if (kernel.hasBias) {
    b = makeInput(sig[2], "bias");            // (n)
    args.push_back(b);
  }

  Var n("n"), t("t"), k("k");
  // Rows past the last token and columns past the last feature are computed
  // by full register tiles and thrown away; clamping keeps their reads inside
  // the buffers.
  Func xClamped("x_clamped");
  xClamped(k, t) = x(k, clamp(t, 0, x.dim(1).extent() - 1));
  Func packed("packed_weight");
  packed(n, k) = w(k, min(n, N - 1));

  RDom r(0, K, "r");
  Func acc("acc");
  acc(n, t) = kernel.hasBias ? b(min(n, N - 1)) : Expr(0.0f);
  acc(n, t) += xClamped(r, t) * packed(n, r);
  Func out("linear");
  out(n, t) = applyActivation(acc(n, t), kernel.activation);
  constrainOutput(out, sig.back());

  const int vw = vectorWidthFor(N, schedule.vectorWidth);
  const int tileCols = std::max(vw, schedule.tileCols / vw * vw);
  const int tileRows = std::max(1, schedule.tileRows);
  Var no("no"), ni("ni"), to("to"), ti("ti"), tile("tile");
  out.split(n, no, ni, tileCols, TailStrategy::GuardWithIf)
      .split(t, to, ti, tileRows, TailStrategy::GuardWithIf)
      .reorder(ni, ti, no, to)
      .vectorize(ni, vw);
  out.fuse(no, to, tile);
  if (schedule.parallel)
    out.parallel(tile);

  Var nv("nv"), nl("nl"), nt("nt"), tl("tl"), tt("tt");
  // The pure and the update definition tile alike, so that the padded
  // accumulators the update reads were initialized.
  acc.compute_at(out, tile)
      .split(n, nt, nv, tileCols, TailStrategy::RoundUp)
      .split(nv, nv, nl, vw)
      .split(t, tt, tl, tileRows, TailStrategy::RoundUp)
      .reorder(nl, nv, tl, nt, tt)
      .vectorize(nl)
      .unroll(nv)
      .unroll(tl);
  acc.update()
      .split(n, nt, nv, tileCols, TailStrategy::RoundUp)
      .split(nv, nv, nl, vw)
      .split(t, tt, tl, tileRows, TailStrategy::RoundUp)
      .reorder(nl, nv, tl, r, nt, tt)
      .vectorize(nl)
      .unroll(nv)
      .unroll(tl);

  Var ko("ko"), ki("ki");
  packed.compute_root().split(k, ko, ki, 16, TailStrategy::GuardWithIf).vectorize(n, vw);
  if (schedule.parallel)
    packed.parallel(ko);

  return {out, args, {xClamped, packed, acc, out}};
}

} // namespace tmc::halide
