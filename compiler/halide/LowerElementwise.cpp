//===- LowerElementwise.cpp - Embeddings, sums, activations, norms --------===//
//
// Row-wise kernels: each token's row is one parallel task, vectorized along
// the features. Norms compute the row's statistics once and reuse them across
// the vectorized write.
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/Lowering.h"

using namespace Halide;

namespace tmc::halide {

namespace {

/// Rows in parallel, features in vectors (shifted inwards at the row's end).
void scheduleRows(Func &out, Var c, Var t, int64_t width, const Schedule &schedule) {
  out.vectorize(c, vectorWidthFor(width, schedule.vectorWidth));
  if (schedule.parallel)
    out.parallel(t);
}

} // namespace

LoweredKernel lowerEmbed(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  ImageParam tokens = makeInput(sig[0], "tokens"); // (t)
  ImageParam table = makeInput(sig[1], "table");   // (c, vocab)
  std::vector<Argument> args = {tokens, table};
  Var c("c"), t("t");
  // The runtime rejects out-of-range tokens before any kernel runs; the clamp
  // keeps this kernel memory-safe on its own.
  Expr row = clamp(tokens(t), 0, static_cast<int>(kernel.tableRows) - 1);
  Expr value = table(c, row);
  if (kernel.scale != 1.0)
    value = value * static_cast<float>(kernel.scale);
  if (kernel.position == "learned") {
    ImageParam positions = makeInput(sig[2], "positions"); // (c, max_seq)
    args.push_back(positions);
    value = value + positions(c, t);
  } else if (kernel.position == "sinusoidal") {
    value = value + sinusoid(c, t, kernel.width);
  }
  Func out("embed");
  out(c, t) = value;
  constrainOutput(out, sig.back());
  scheduleRows(out, c, t, kernel.width, schedule);
  return {out, args, {out}};
}

LoweredKernel lowerAddPositions(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  ImageParam x = makeInput(sig[0], "x");
  std::vector<Argument> args = {x};
  Var c("c"), t("t");
  Expr position;
  if (kernel.position == "learned") {
    ImageParam positions = makeInput(sig[1], "positions");
    args.push_back(positions);
    position = positions(c, t);
  } else {
    position = sinusoid(c, t, kernel.width);
  }
  Func out("add_positions");
  out(c, t) = x(c, t) + position;
  constrainOutput(out, sig.back());
  scheduleRows(out, c, t, kernel.width, schedule);
  return {out, args, {out}};
}

LoweredKernel lowerElementwise(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  Var c("c"), t("t");
  Func out;
  std::vector<Argument> args;
  if (kernel.kind == KernelKind::Add) {
    ImageParam a = makeInput(sig[0], "lhs"), b = makeInput(sig[1], "rhs");
    out = Func("add");
    out(c, t) = a(c, t) + b(c, t);
    args = {a, b};
  } else {
    ImageParam x = makeInput(sig[0], "x");
    out = Func("activation");
    out(c, t) = applyActivation(x(c, t), kernel.activation);
    args = {x};
  }
  constrainOutput(out, sig.back());
  scheduleRows(out, c, t, kernel.width, schedule);
  return {out, args, {out}};
}

LoweredKernel lowerLayerNorm(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  bool residual = kernel.kind == KernelKind::AddLayerNorm;
  ImageParam x = makeInput(sig[0], "x");
  std::vector<Argument> args = {x};
  ImageParam r;
  if (residual) {
    r = makeInput(sig[1], "residual");
    args.push_back(r);
  }
  size_t p = residual ? 2 : 1;
  ImageParam gamma = makeInput(sig[p], "weight"), beta = makeInput(sig[p + 1], "bias");
  args.push_back(gamma);
  args.push_back(beta);

  const int width = static_cast<int>(kernel.width);
  Var c("c"), t("t");
  Func input("sum");
  input(c, t) = residual ? x(c, t) + r(c, t) : x(c, t);
  RDom rc(0, width, "rc");
  Func mean("mean");
  mean(t) = sum(input(rc, t)) / static_cast<float>(width);
  // Two passes (mean, then squared deviations) rather than E[x^2] - E[x]^2,
  // which cancels catastrophically for rows with a large mean.
  Func centered("centered");
  centered(c, t) = input(c, t) - mean(t);
  Func invStd("inv_std");
  invStd(t) = 1.0f / sqrt(sum(centered(rc, t) * centered(rc, t)) / static_cast<float>(width) +
                          static_cast<float>(kernel.eps));
  Func out(residual ? "add_layer_norm" : "layer_norm");
  out(c, t) = centered(c, t) * invStd(t) * gamma(c) + beta(c);
  constrainOutput(out, sig.back());

  scheduleRows(out, c, t, kernel.width, schedule);
  int vw = vectorWidthFor(width, schedule.vectorWidth);
  input.compute_at(out, t).vectorize(c, vw);
  mean.compute_at(out, t);
  centered.compute_at(out, t).vectorize(c, vw);
  invStd.compute_at(out, t);
  return {out, args, {input, mean, centered, invStd, out}};
}

} // namespace tmc::halide
