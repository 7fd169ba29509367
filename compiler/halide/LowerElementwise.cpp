//===- LowerElementwise.cpp - Embeddings, sums, activations, norms --------===//
//
// Row-wise kernels: each token's row is one parallel task, vectorized along
// the features. Norms compute the row's statistics once and reuse them across
// the vectorized write.
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/HalfBits.h"
#include "compiler/halide/Lowering.h"
#include "compiler/halide/Trigonometry.h"

using namespace Halide;

namespace tmc::halide {

namespace {

/// Rows `t` (the output's last dimension) in parallel when the schedule says
/// so and the call has parallelMinRows rows or more; serial otherwise.
void parallelRows(Func &out, Var t, const Schedule &schedule) {
  if (!schedule.parallel)
    return;
  if (schedule.parallelMinRows <= 1) {
    out.parallel(t);
    return;
  }
  Expr rows = out.output_buffer().dim(out.dimensions() - 1).extent();
  out.specialize(rows >= schedule.parallelMinRows).parallel(t);
}

/// Rows in parallel, features in vectors; a row's last partial vector is
/// shifted inwards unless `tail` says otherwise.
void scheduleRows(Func &out, Var c, Var t, int64_t width, const Schedule &schedule,
                  TailStrategy tail = TailStrategy::Auto) {
  if (schedule.gpu)
    return; // GpuSchedule.cpp's, applied by lowerKernel
  out.vectorize(c, vectorWidthFor(width, schedule.vectorWidth), tail);
  parallelRows(out, t, schedule);
}

/// Element (c, row) of a tied head's packed table (LowerPack.cpp's
/// contract, K = the embedding width), dequantized as the head's GEMM reads
/// it: bf16 widened; int8 q times its channel's f32 scale; q4 (q - 8) times
/// its block's f16 scale. The panel width P and the row count are the
/// buffer's, so that any schedule of the head serves.
Expr packedTableElement(const ImageParam &table, const std::string &precision, Expr c, Expr row) {
  // Halide's interval arithmetic cannot see that these stay inside the
  // buffer (row < vocab <= P * panels; b / 2 and b % 2 name one block):
  // promised, true for every row and column the kernel reads.
  Expr P = table.dim(1).extent(), rows = table.dim(2).extent();
  Expr j = unsafe_promise_clamped(row % P, 0, P - 1);
  Expr p = unsafe_promise_clamped(row / P, 0, table.dim(3).extent() - 1);
  // Through the bits on every target (HalfBits.h: NVPTX and bf16 values).
  if (precision == "bf16")
    return floatOfBfloatBits(reinterpret<uint16_t>(table(c % 2, j, c / 2, p)));
  auto byteAt = [&](Expr e, Expr r) {
    return cast<uint32_t>(reinterpret<uint8_t>(table(e, j, r, p)));
  };
  if (precision == "int8") {
    // The channel's scale: the 4 bytes after its ceil(K/4) quad rows.
    Expr scaleRow = rows - 2;
    Expr bits = byteAt(0, scaleRow) | (byteAt(1, scaleRow) << 8) | (byteAt(2, scaleRow) << 16) |
                (byteAt(3, scaleRow) << 24);
    return cast<float>(table(c % 4, j, c / 4, p)) * reinterpret<float>(bits);
  }
  // q4: element 32 b + 8 h + 4 n + e of block b is nibble n of byte e of
  // quad row 9 (b / 2) + 4 (b % 2) + h; the block's scale bytes sit at
  // 2 (b % 2) P + j (low) and P further (high) of row 9 (b / 2) + 8.
  Expr b = c / 32, inBlock = c % 32;
  Expr quadRow = unsafe_promise_clamped(9 * (b / 2) + 4 * (b % 2) + inBlock / 8, 0, rows - 1);
  Expr scaleRow = unsafe_promise_clamped(9 * (b / 2) + 8, 0, rows - 1);
  Expr byte = reinterpret<uint8_t>(table(inBlock % 4, j, quadRow, p));
  Expr nibble = (byte >> cast<uint8_t>(4 * ((inBlock % 8) / 4))) & cast<uint8_t>(15);
  // Byte o of that row is element (o % 4, o / 4): o < 4 P.
  auto scaleByte = [&](Expr o) {
    Expr quad = unsafe_promise_clamped(o / 4, 0, P - 1);
    return cast<uint32_t>(reinterpret<uint8_t>(table(o % 4, quad, scaleRow, p)));
  };
  Expr low = 2 * P * (b % 2) + j;
  Expr scale = floatOfHalfBits(scaleByte(low) | (scaleByte(low + P) << 8));
  return cast<float>(cast<int32_t>(nibble) - 8) * scale;
}

} // namespace

LoweredKernel lowerEmbed(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  ImageParam tokens = makeInput(sig[0], "tokens"); // (t)
  Param<int32_t> offset("offset");                 // tokens before this run
  const bool packed = kernel.precision != "f32";
  // f32: (c, vocab); else the head's packed weight, whose panel width and
  // panel count (dimensions 1 and 3) come with the buffer.
  ImageParam table = packed ? makeInput(sig[2], "table", {1, 3}) : makeInput(sig[2], "table");
  std::vector<Argument> args = {tokens, offset, table};
  Var c("c"), t("t");
  // The runtime rejects out-of-range tokens before any kernel runs; the clamp
  // keeps this kernel memory-safe on its own.
  Expr row = clamp(tokens(t), 0, static_cast<int>(kernel.tableRows) - 1);
  Expr value = packed ? packedTableElement(table, kernel.precision, c, row) : table(c, row);
  if (kernel.scale != 1.0)
    value = value * static_cast<float>(kernel.scale);
  if (kernel.position == "learned") {
    ImageParam positions = makeInput(sig[3], "positions"); // (c, max_seq)
    args.push_back(positions);
    value = value + positions(c, offset + t);
  } else if (kernel.position == "sinusoidal") {
    value = value + sinusoid(c, offset + t, kernel.width, schedule.gpu);
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
  Param<int32_t> offset("offset");
  std::vector<Argument> args = {x, offset};
  Var c("c"), t("t");
  Expr position;
  if (kernel.position == "learned") {
    ImageParam positions = makeInput(sig[2], "positions");
    args.push_back(positions);
    position = positions(c, offset + t);
  } else {
    position = sinusoid(c, offset + t, kernel.width, schedule.gpu);
  }
  Func out("add_positions");
  out(c, t) = x(c, t) + position;
  constrainOutput(out, sig.back());
  scheduleRows(out, c, t, kernel.width, schedule);
  return {out, args, {out}};
}

LoweredKernel lowerAddSegments(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  ImageParam x = makeInput(sig[0], "x");
  ImageParam ids = makeInput(sig[1], "segment_ids");
  ImageParam table = makeInput(sig[2], "segment_table");
  Var c("c"), t("t");
  Func out("add_segments");
  // The runtime rejects ids out of range; the clamp keeps the kernel safe alone.
  out(c, t) = x(c, t) + table(c, clamp(ids(t), 0, static_cast<int>(kernel.positionRows) - 1));
  constrainOutput(out, sig.back());
  scheduleRows(out, c, t, kernel.width, schedule);
  return {out, {x, ids, table}, {out}};
}

LoweredKernel lowerElementwise(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  Var c("c"), t("t");
  Func out;
  std::vector<Argument> args;
  if (kernel.kind == KernelKind::add) {
    ImageParam a = makeInput(sig[0], "lhs"), b = makeInput(sig[1], "rhs");
    out = Func("add");
    out(c, t) = a(c, t) + b(c, t);
    args = {a, b};
  } else if (kernel.kind == KernelKind::gated_activation) {
    ImageParam gate = makeInput(sig[0], "gate"), up = makeInput(sig[1], "up");
    out = Func("gated");
    out(c, t) = applyActivation(gate(c, t), kernel.activation) * up(c, t);
    args = {gate, up};
  } else {
    ImageParam x = makeInput(sig[0], "x");
    out = Func("activation");
    out(c, t) = applyActivation(x(c, t), kernel.activation);
    args = {x};
  }
  constrainOutput(out, sig.back());
  // tmk-plan-buffers may write the result over a dying input
  // (KernelOp::mayOverwriteInput): a vector shifted inwards would read inputs
  // again after their first elements were written, so the tail is guarded.
  // (Norms read their staged row, not the input, as they write.)
  scheduleRows(out, c, t, kernel.width, schedule, TailStrategy::GuardWithIf);
  return {out, args, {out}};
}

LoweredKernel lowerNorm(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  bool residual = kernel.kind == KernelKind::add_norm;
  bool rms = kernel.variant == "rmsnorm";
  size_t p = 0;
  ImageParam x = makeInput(sig[p++], "x");
  std::vector<Argument> args = {x};
  ImageParam r;
  if (residual) {
    r = makeInput(sig[p++], "residual");
    args.push_back(r);
  }
  ImageParam gamma = makeInput(sig[p++], "weight");
  args.push_back(gamma);
  ImageParam beta;
  if (kernel.hasBias) {
    beta = makeInput(sig[p++], "bias");
    args.push_back(beta);
  }

  const int width = static_cast<int>(kernel.width);
  Var c("c"), t("t");
  Func input("sum");
  input(c, t) = residual ? x(c, t) + r(c, t) : x(c, t);
  RDom rc(0, width, "rc");
  // LayerNorm takes two passes (mean, then squared deviations) rather than
  // E[x^2] - E[x]^2, which cancels catastrophically for rows with a large mean.
  // On CPUs the two sums are Funcs of their own, so that the schedule can
  // sum each row in vector lanes (below); GPUs keep the inline sums.
  Func mean("mean"), centered("centered"), invStd("inv_std");
  Func rowSum("row_sum"), squareSum("square_sum");
  const float count = static_cast<float>(width), eps = static_cast<float>(kernel.eps);
  if (schedule.gpu) {
    mean(t) = rms ? Expr(0.0f) : sum(input(rc, t)) / count;
  } else if (rms) {
    mean(t) = 0.0f;
  } else {
    rowSum(t) = 0.0f;
    rowSum(t) += input(rc, t);
    mean(t) = rowSum(t) / count;
  }
  centered(c, t) = input(c, t) - mean(t);
  if (schedule.gpu) {
    invStd(t) = 1.0f / sqrt(sum(centered(rc, t) * centered(rc, t)) / count + eps);
  } else {
    squareSum(t) = 0.0f;
    squareSum(t) += centered(rc, t) * centered(rc, t);
    invStd(t) = 1.0f / sqrt(squareSum(t) / count + eps);
  }
  Func out(std::string(residual ? "add_" : "") + kernel.variant);
  Expr normalized = centered(c, t) * invStd(t) * gamma(c);
  out(c, t) = kernel.hasBias ? normalized + beta(c) : normalized;
  constrainOutput(out, sig.back());

  scheduleRows(out, c, t, kernel.width, schedule);
  if (schedule.gpu)
    return {out, args, {input, mean, centered, invStd, out}};
  int vw = vectorWidthFor(width, schedule.vectorWidth);
  // The row's reductions are computed once per token; the sum and the
  // centered row are either stored for the passes that follow (stage_rows)
  // or recomputed inside each of them (an add and a subtract per element
  // against a store and a load).
  if (schedule.stageRows) {
    input.compute_at(out, t).vectorize(c, vw);
    centered.compute_at(out, t).vectorize(c, vw);
  }
  // Each sum in vector lanes: lane l adds the elements l, l + L, ... of the
  // row, then the L lanes are added. One serial chain of adds over the row
  // cost about 1 ns an element (the long-context decoder's rmsnorm: 63 us per
  // call of 256 rows, 4.11 -> 1.96 ms per 4k prefill in lanes). L is the
  // largest power of two up to the vector width that divides the width
  // (a row of odd width keeps one chain); every row is summed in the same
  // order whatever the call's row count.
  int lanes = 1;
  while (lanes * 2 <= vw && width % (lanes * 2) == 0)
    lanes *= 2;
  std::vector<Func> stages = {input};
  auto sumInLanes = [&](Func total) {
    total.compute_at(out, t);
    if (lanes > 1) {
      RVar outer("rco"), inner("rci");
      Var lane("lane");
      Func partial = total.update().split(rc.x, outer, inner, lanes).rfactor(inner, lane);
      partial.compute_at(out, t).vectorize(lane);
      partial.update().vectorize(lane);
      stages.push_back(partial);
    }
    stages.push_back(total);
  };
  if (!rms)
    sumInLanes(rowSum);
  mean.compute_at(out, t);
  stages.push_back(mean);
  stages.push_back(centered);
  sumInLanes(squareSum);
  invStd.compute_at(out, t);
  stages.push_back(invStd);
  stages.push_back(out);
  return {out, args, stages};
}

void scheduleByHalves(Func &out, Var c, Var t, int half, const Schedule &schedule) {
  Var part("part"), within("within");
  const int vw = vectorWidthFor(half, schedule.vectorWidth);
  out.split(c, part, within, half)
      .unroll(part)
      .vectorize(within, vw, half % vw ? TailStrategy::GuardWithIf : TailStrategy::Auto);
  parallelRows(out, t, schedule);
}

LoweredKernel lowerRopeTable(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  Param<int32_t> offset("offset");
  const int headDim = static_cast<int>(kernel.headDim), half = headDim / 2;
  Var c("c"), f("f"), t("t");
  // Angles reach max_seq radians; computed in double, as the sinusoidal
  // encoding is. On CPUs the frequencies are constants and sin/cos vector
  // arithmetic (Trigonometry.h): libm's sincos and pow per (f, t) took 13% of
  // a small model's prefill.
  Func cosine("cos_row"), sine("sin_row");
  if (schedule.gpu) {
    Expr angle = cast<double>(offset + t) *
                 pow(Expr(kernel.theta), Expr(-2.0) * cast<double>(f) / Expr(double(headDim)));
    cosine(f, t) = cast<float>(cos(angle));
    sine(f, t) = cast<float>(sin(angle));
  } else {
    std::vector<double> frequency(static_cast<size_t>(half));
    for (int i = 0; i < half; ++i)
      frequency[i] = std::pow(kernel.theta, -2.0 * i / static_cast<double>(headDim));
    Func frequencies = constantTable(frequency, "frequency", /*padTo=*/8);
    SinCos trig = vectorSinCos(cast<double>(offset + t) * frequencies(f));
    cosine(f, t) = cast<float>(trig.cos);
    sine(f, t) = cast<float>(trig.sin);
  }
  // A row: half a head of cosines, then half a head of sines.
  Func out("rope_table");
  out(c, t) = select(c < half, cosine(c % half, t), sine(c % half, t));
  constrainOutput(out, sig.back());
  if (schedule.gpu)
    return {out, {offset}, {cosine, sine, out}};
  // Each half vectorized on its own (`c < half` then a constant), from one
  // pass of the sin/cos arithmetic per row in double lanes, rounded up to
  // whole vectors (the frequency table is padded to match).
  scheduleByHalves(out, c, t, half, schedule);
  cosine.compute_at(out, t).vectorize(f, 8, TailStrategy::RoundUp);
  sine.compute_at(out, t).vectorize(f, 8, TailStrategy::RoundUp);
  return {out, {offset}, {cosine, sine, out}};
}

LoweredKernel lowerRope(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  ImageParam x = makeInput(sig[0], "x");         // (d, h, t)
  ImageParam table = makeInput(sig[1], "table"); // (c, t): cos then sin (lowerRopeTable)
  const int headDim = static_cast<int>(kernel.headDim), half = headDim / 2;
  Var d("d"), h("h"), t("t");
  // Indices modulo the half and the head: their bounds are exact, so no load
  // needs a clamp.
  Expr f0 = d % half;
  Expr partner = select(d < half, -1.0f, 1.0f) * x((d + half) % headDim, h, t);
  Func out("rope");
  out(d, h, t) = x(d, h, t) * table(f0, t) + partner * table(half + f0, t);
  constrainOutput(out, sig.back());
  if (schedule.gpu)
    return {out, {x, table}, {out}};
  // Within a half `d < half` is a constant, so the partner and the table
  // index are dense loads.
  scheduleByHalves(out, d, t, half, schedule);
  return {out, {x, table}, {out}};
}

LoweredKernel lowerSeqProject(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  ImageParam x = makeInput(sig[0], "x");                // (c, t)
  ImageParam e = makeInput(sig[1], "projection");       // (t, r): [k, max_seq]
  std::vector<Argument> args = {x, e};
  Expr valid = x.dim(1).extent();
  if (kernel.hasLength) {
    Param<int32_t> length("length");
    args.push_back(length);
    valid = clamp(length, 1, valid);
  }
  Var c("c"), r("r");
  RDom rt(0, valid, "rt");
  Func out("seq_project");
  if (schedule.gpu) {
    out(c, r) = 0.0f;
    out(c, r) += e(rt, r) * x(c, rt);
    constrainOutput(out, sig.back());
    return {out, args, {out}};
  }
  // The sum in a row of its own, then the output row: an update that reads
  // the output buffer back took Halide 14's aligned vector loads (vmovaps)
  // whatever the buffer's declared host alignment, and a call whose rows
  // start off 64 bytes (the arena at offset index x T for a T not a multiple
  // of 4: a Linformer encoder's source of 34 tokens) faulted.
  Func sum("seq_project_sum");
  sum(c, r) = 0.0f;
  sum(c, r) += e(rt, r) * x(c, rt);
  out(c, r) = sum(c, r);
  constrainOutput(out, sig.back());
  int vw = vectorWidthFor(kernel.width, schedule.vectorWidth);
  out.vectorize(c, vw);
  sum.compute_at(out, r).vectorize(c, vw);
  // A width that is not a whole number of vectors (24 on AVX-512) takes its
  // last vector guarded: the update's default, RoundUp, would sum lanes past
  // the row's width, beyond the rows of x it reads.
  sum.update().reorder(c, rt).vectorize(c, vw, vectorTail(kernel.width, vw));
  return {out, args, {out, sum}};
}

LoweredKernel lowerPool(const KernelDesc &kernel, const Schedule &schedule) {
  std::vector<BufferShape> sig = kernelSignature(kernel);
  ImageParam x = makeInput(sig[0], "x"); // (c, t)
  Var c("c"), t("t");
  Func out("pool_" + kernel.variant);
  std::vector<Argument> args = {x};
  if (kernel.variant == "mean") {
    // The unpadded rows only; the runtime keeps length in [1, T].
    Param<int32_t> length("length");
    args.push_back(length);
    Expr valid = clamp(length, 1, x.dim(1).extent());
    RDom rt(0, valid, "rt");
    out(c, t) = sum(x(c, rt)) / cast<float>(valid);
  } else {
    out(c, t) = x(c, 0);
  }
  constrainOutput(out, sig.back());
  if (!schedule.gpu)
    out.vectorize(c, vectorWidthFor(kernel.width, schedule.vectorWidth));
  return {out, args, {out}};
}

} // namespace tmc::halide
