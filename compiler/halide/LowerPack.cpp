//===- LowerPack.cpp - Load-time packing of linear weights ----------------===//
//
// THE PACKED WEIGHT CONTRACT (shared by this file, LowerLinear.cpp and the
// executor generator; change all three together).
//
// For a Linear kernel `kd` compiled with schedule `s`, let
//   L = gemmLayout(kd, s)            (compiler/Schedule.h; Halide-free)
//   K = kd.inWidth, N = kd.width, P = L.panelWidth, panels = L.panels = ceil(N / P).
// P depends only on s.tileCols, s.vectorWidth and N; nothing else of the
// schedule (blocking, unrolling, tile rows, threads) changes the layout, but
// the executor must pack with the *same* Schedule it compiles the GEMM with.
//
// Pack kernel  `lowerPackWeight(kd, s)`, run once after the weights load:
//   in  weight         f32, Halide (k, n), extents [K, N]  (PyTorch [N, K] row-major, dense)
//   out packed_weight  f32, Halide (j, k, p), extents [P, K, panels], dense:
//       packed[(p * K + k) * P + j] = W[p * P + j][k]   if p * P + j < N
//                                   = 0                  otherwise (tail panel padding)
//   `packedWeightShape(kd, s)` returns a float BufferShape with extents {P, K, panels}.
//   K is never padded; any K >= 1, N >= 1 work; no token count is involved.
//
// GEMM kernel `lowerPackedLinear(kd, s)`, every call:
//   in  x              f32, (k, t), [K, T]        (T = run-time token count, >= 1)
//   in  packed_weight  f32, (j, k, p), [P, K, panels]  (the pack kernel's output)
//   in  bias           f32, (n), [N]              (only if kd.hasBias)
//   in  residual       f32, (n, t), [N, T]        (only if kd.hasResidual; added last)
//   out                f32, (n, t), [N, T]
// i.e. kernelSignature(kd) with argument 1 replaced by packedWeightShape.
// There is no separate decode kernel: with s.decodeVariant the GEMM branches
// on T == 1 at run time into a one-row tile (same arguments).
// `lowerLinear(kd, s)` keeps the unpacked signature (kernelSignature(kd)) and
// packs inside the pipeline on every call, until the executor packs at load.
//
// bf16 precision (L.bf16; K2 = L.kPairs = ceil(K / 2)): the packed weight is
// bf16, Halide (e, j, k2, p), extents [2, P, K2, panels], dense:
//       packed[((p * K2 + k2) * P + j) * 2 + e] = bf16(W[p * P + j][2 * k2 + e])
//   rounded to nearest even, 0 past N and past K (an odd K's last pair).
//   `packedWeightShape` says so with isBF16 and four extents; one k2 step of
//   a panel is P pairs, 16 of which fill the 32 bf16 lanes of vdpbf16ps.
//
// int8 precision (L.int8; K4 = L.kQuads = ceil(K / 4)): each output channel n
// is quantized symmetrically (docs/spec-language.md has the arithmetic):
//       m = max_k |W[n][k]|, scale[n] = m / 127, inv = 127 / m (0 if m == 0),
//       q[n][k] = int8(clamp(round_half_even(W[n][k] * inv), -127, 127)),
//       corr[n] = 128 * sum_k q[n][k]   (the GEMM's u8 zero point, undone)
//   all in f32 / int32. The packed weight is int8, Halide (e, j, k4, p),
//   extents [4, P, K4 + 2, panels], dense:
//       packed[((p * (K4 + 2) + k4) * P + j) * 4 + e]
//           = q[p * P + j][4 * k4 + e]             for k4 < K4 (0 past K)
//           = byte e of scale[p * P + j] (f32)     for k4 = K4
//           = byte e of corr[p * P + j] (int32)    for k4 = K4 + 1
//   little-endian, all 0 past N. One k4 step of a panel is P quads: 16 of
//   them fill a zmm, the 64 bytes vpdpbusd multiplies by 16 broadcast token
//   quads. The scale and correction ride in the panel so that the GEMM keeps
//   one weight argument and reads them once per output tile.
//
// q4 precision (L.q4; B = L.q4Blocks = ceil(K / 32), S = ceil(B / 2)): each
// block of 32 consecutive k of an output channel n is quantized as ggml's
// quantize_row_q4_0_ref does (docs/spec-language.md), in f32:
//       mx = the first value of largest magnitude, d = mx / -8,
//       id = 1 / d (0 if d == 0), q[k] = min(15, trunc(W[n][k] * id + 8.5)),
//       scale[n][b] = f16(d) (round to nearest even); past K, W = 0 (q = 8).
//   The packed weight is int8, Halide (e, j, r, p), extents [4, P, 9 S,
//   panels], dense; for the block pair s, row r = 9 s + i:
//       i < 8: block b = 2 s + i / 4, h = i % 4, byte e of channel j =
//              q[n][32 b + 8 h + e] | q[n][32 b + 8 h + 4 + e] << 4
//              (the low nibbles are quad 2 h of the block, the high quad 2 h + 1)
//       i = 8: the f16 bits of the two blocks' scales, in four runs of P
//              bytes: byte o = 4 j + e of the row (0 <= o < 4 P) is
//              the low byte of scale[c][2 s + q] for o = 2 q P + c,
//              the high byte of scale[c][2 s + q] for o = 2 q P + P + c
//              (c = o % P, channel p * P + c; 0 when 2 s + q == B)
//   all 0 past N, 0x88 (zero values) in the block that pads an odd B. One
//   row of a panel is P quads of bytes: 16 of them fill the 64 bytes that
//   vpdpbusd multiplies, once masked to the low nibbles and once shifted to
//   the high ones. A block's scales for 16 channels are two 16-byte loads,
//   low bytes and high bytes, away (P is a multiple of 4).
//
// Pre-quantized weights (`tmc quantize`; docs/spec-language.md, "Quantized
// weight files"): int8 and q4 GEMMs also get `lowerPackQuantizedWeight`,
//   in  values  int8 (k, n) [K, N] (q above); q4: uint8 (byte, n) [16 B, N],
//               byte i of block b holding q[32 b + i] | q[32 b + 16 + i] << 4
//   in  scales  f32 (n) [N] (scale above); q4: uint16 (b, n) [B, N], f16 bits
//   out packed_weight, exactly as above
// so that such a file packs to the very bytes its f32 original packs to.
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/HalfBits.h"
#include "compiler/halide/Lowering.h"

#include <stdexcept>

using namespace Halide;

namespace tmc::halide {

BufferShape packedWeightShape(const KernelDesc &kernel, const Schedule &schedule) {
  return gemmLayout(kernel, schedule).packedShape();
}

namespace {

/// Byte `e` (0 = least significant) of a 32-bit value, as the int8 it is
/// stored as.
Expr byteOf(Expr bits32, Expr e) {
  return cast<int8_t>(cast<uint8_t>((reinterpret<uint32_t>(bits32) >> cast<uint32_t>(8 * e)) &
                                    cast<uint32_t>(0xff)));
}

/// The int8 panels (the contract above) of per-channel values `quantized(k,
/// n)` (int8, any n: clamped inside) and scales `scale(n)` (f32): quads, then
/// each channel's scale and correction bytes. `stats` are the stages that
/// computed them; the panels add the channels' sums of values.
PackedWeightFuncs int8Panels(const Func &quantized, const Func &scale, std::vector<Func> stats,
                             const GemmLayout &layout) {
  const int P = layout.panelWidth;
  const int N = static_cast<int>(layout.N), K = static_cast<int>(layout.K);
  const int K4 = static_cast<int>(layout.kQuads);
  Var n("n"), e("e"), j("j"), k4("k4"), p("p");
  RDom r(0, K, "r");
  Func rowSum("weight_qsum");
  rowSum(n) = 0;
  rowSum(n) += cast<int32_t>(quantized(r, n));
  stats.push_back(rowSum);
  Expr channel = p * P + j, kk = 4 * k4 + e;
  Expr inside = channel < N;
  Expr quad = select(inside && kk < K, quantized(min(kk, K - 1), channel), cast<int8_t>(0));
  Expr channelScale = select(inside, scale(min(channel, N - 1)), 0.0f);
  Expr correction = select(inside, 128 * rowSum(channel), 0);
  Func packed("packed_weight");
  packed(e, j, k4, p) =
      select(k4 < K4, quad, k4 == K4, byteOf(channelScale, e), byteOf(correction, e));
  return {packed, stats};
}

/// int8 from an f32 weight: each channel quantized as the contract says.
PackedWeightFuncs definePackedInt8(const Func &weight, const GemmLayout &layout) {
  const int N = static_cast<int>(layout.N), K = static_cast<int>(layout.K);
  Var n("n"), k("k");
  RDom r(0, K, "r");
  Func absMax("weight_absmax"), quantized("weight_q"), scale("weight_scale");
  Expr row = min(n, N - 1);
  absMax(n) = 0.0f;
  absMax(n) = max(absMax(n), abs(weight(r, row)));
  // strict_float: Halide would otherwise multiply by a rounded reciprocal
  // of 127, one ulp off the contract's quotient now and then.
  Expr inv = select(absMax(n) > 0.0f, strict_float(127.0f / absMax(n)), 0.0f);
  quantized(k, n) =
      cast<int8_t>(clamp(round(strict_float(weight(k, row) * inv)), -127.0f, 127.0f));
  scale(n) = strict_float(absMax(n) / 127.0f);
  return int8Panels(quantized, scale, {absMax}, layout);
}

/// The q4 panels (the contract above) of each block's stored values
/// `quantized(i, b, n)` (u8, 0..15; any b and n: clamped by the caller's
/// Funcs) and f16 scale bits `scaleBits(b, n)` (uint32): per pair of
/// blocks, four rows of nibble pairs for each block, then the two blocks'
/// scales.
PackedWeightFuncs q4Panels(const Func &quantized, const Func &scaleBits, std::vector<Func> stats,
                           const GemmLayout &layout) {
  const int P = layout.panelWidth;
  const int N = static_cast<int>(layout.N);
  const int B = static_cast<int>(layout.q4Blocks);
  Var e("e"), j("j"), r("r"), p("p");
  Expr s = r / 9, row = r % 9;
  // Nibble rows: channel j's quad.
  Expr channel = p * P + j;
  Expr block = 2 * s + row / 4, h = row % 4;
  Expr safeBlock = min(block, B - 1), safeChannel = min(channel, N - 1);
  Expr nibbles = quantized(8 * h + e, safeBlock, safeChannel) |
                 (quantized(8 * h + 4 + e, safeBlock, safeChannel) << 4);
  nibbles = select(channel >= N, cast<uint8_t>(0), block < B, nibbles, cast<uint8_t>(0x88));
  // The scale row, byte o = 4 j + e: four runs of P bytes (the contract).
  Expr o = 4 * j + e;
  Expr scaleBlock = 2 * s + o / (2 * P), high = (o / P) % 2 == 1;
  Expr scaleChannel = p * P + o % P;
  Expr bits = scaleBits(min(scaleBlock, B - 1), min(scaleChannel, N - 1));
  Expr scaleByte = cast<uint8_t>(select(high, bits >> 8, bits & 0xff));
  scaleByte = select(scaleBlock < B && scaleChannel < N, scaleByte, cast<uint8_t>(0));
  Func packed("packed_weight");
  packed(e, j, r, p) = reinterpret<int8_t>(select(row < 8, nibbles, scaleByte));
  return {packed, stats};
}

/// q4 from an f32 weight: each block quantized as ggml's Q4_0 (the contract).
PackedWeightFuncs definePackedQ4(const Func &weight, const GemmLayout &layout) {
  const int N = static_cast<int>(layout.N), K = static_cast<int>(layout.K);
  Var n("n"), b("b"), i("i");
  RDom ri(0, 32, "ri");
  auto value = [&](Expr index, Expr block, Expr channel) {
    Expr k = 32 * block + index;
    return select(k < K, weight(clamp(k, 0, K - 1), clamp(channel, 0, N - 1)), 0.0f);
  };
  // The block's largest magnitude and the first value that has it.
  Func extreme("weight_block_extreme");
  extreme(b, n) = {0.0f, 0.0f};
  Expr w = value(ri, b, n), larger = abs(w) > extreme(b, n)[0];
  extreme(b, n) = {select(larger, abs(w), extreme(b, n)[0]), select(larger, w, extreme(b, n)[1])};
  // strict_float: the contract's quotient, product and sum, each rounded
  // (Halide would otherwise fold them into a reciprocal or a fused add).
  Expr d = strict_float(extreme(b, n)[1] / -8.0f);
  Expr id = select(d != 0.0f, strict_float(1.0f / d), 0.0f);
  Func quantized("weight_q4"), scaleBits("weight_q4_scale");
  quantized(i, b, n) =
      cast<uint8_t>(min(15, cast<int32_t>(strict_float(value(i, b, n) * id + 8.5f))));
  // uint32, not uint16: HalfBits.h says why.
  scaleBits(b, n) = halfBitsOf(d);
  return q4Panels(quantized, scaleBits, {extreme, scaleBits}, layout);
}

} // namespace

PackedWeightFuncs definePackedWeight(const Func &weight, const GemmLayout &layout) {
  if (layout.int8)
    return definePackedInt8(weight, layout);
  if (layout.q4)
    return definePackedQ4(weight, layout);
  const int P = layout.panelWidth;
  const int N = static_cast<int>(layout.N);
  Var j("j"), k("k"), p("p");
  Expr n = p * P + j;
  Func packed("packed_weight");
  if (layout.bf16) {
    const int K = static_cast<int>(layout.K);
    Var e("e");
    Expr kk = 2 * k + e;
    packed(e, j, k, p) = cast(BFloat(16), select(n < N && kk < K,
                                                 weight(min(kk, K - 1), min(n, N - 1)), 0.0f));
    return {packed, {}};
  }
  packed(j, k, p) = select(n < N, weight(k, min(n, N - 1)), 0.0f);
  return {packed, {}};
}

void schedulePackedWeight(PackedWeightFuncs &funcs, const GemmLayout &layout,
                          const Schedule &schedule) {
  Func &packed = funcs.packed;
  // int8 and q4: the statistics once per channel (q4: per block of a
  // channel) first, channels in parallel.
  for (Func &stat : funcs.channelStats) {
    stat.compute_root();
    if (schedule.parallel) {
      Var channel = stat.args().back();
      stat.parallel(channel, 16);
      if (stat.has_update_definition())
        stat.update().parallel(channel, 16);
    }
  }
  if (layout.bf16 || layout.quantized()) {
    // Groups of 2 or 4 adjacent source values, a panel row of P groups at a
    // time.
    Var e = packed.args()[0], j = packed.args()[1], k = packed.args()[2], p = packed.args()[3];
    packed.bound(e, 0, layout.bf16 ? 2 : 4)
        .reorder(e, j, k, p)
        .unroll(e)
        .vectorize(j, layout.vectorWidth, TailStrategy::GuardWithIf);
    if (schedule.parallel)
      packed.parallel(p);
    return;
  }
  // Each task writes one panel. The weight's rows are K apart, so a panel
  // row is a strided gather; blocking k by the vector width keeps the vw x P
  // block of source lines in L1 while it is consumed.
  Var j = packed.args()[0], k = packed.args()[1], p = packed.args()[2];
  Var ko("ko"), ki("ki");
  const int vw = layout.vectorWidth;
  packed.split(k, ko, ki, vw, TailStrategy::GuardWithIf)
      .reorder(j, ki, ko, p)
      .vectorize(j, vw);
  if (schedule.parallel)
    packed.parallel(p);
}

PackedWeightFuncs definePackedFromQuantized(const Func &values, const Func &scales,
                                            const GemmLayout &layout) {
  const int N = static_cast<int>(layout.N);
  Var k("k"), n("n"), i("i"), b("b");
  Expr row = min(n, N - 1);
  if (layout.int8) {
    Func quantized("weight_q"), scale("weight_scale");
    quantized(k, n) = values(k, row);
    scale(n) = scales(row);
    return int8Panels(quantized, scale, {}, layout);
  }
  // q4: byte j of a block holds value j (low nibble) and value j + 16.
  Func quantized("weight_q4"), scaleBits("weight_q4_scale");
  Expr byte = values(16 * b + i % 16, row);
  quantized(i, b, n) = select(i < 16, byte & cast<uint8_t>(15), byte >> cast<uint8_t>(4));
  scaleBits(b, n) = cast<uint32_t>(scales(b, row));
  return q4Panels(quantized, scaleBits, {}, layout);
}

namespace {

/// A pack kernel of `funcs` reading `inputs`: the contract's output shape,
/// and schedulePackedWeight's schedule.
LoweredKernel packKernel(PackedWeightFuncs funcs, std::vector<Argument> inputs,
                         const KernelDesc &kernel, const Schedule &schedule) {
  Func &packed = funcs.packed;
  const BufferShape shape = packedWeightShape(kernel, schedule);
  constrainOutput(packed, shape);
  packed.set_estimates(estimatesOf(shape));
  schedulePackedWeight(funcs, gemmLayout(kernel, schedule), schedule);
  std::vector<Func> stages = funcs.channelStats;
  stages.push_back(packed);
  return {packed, std::move(inputs), stages};
}

} // namespace

LoweredKernel lowerPackQuantizedWeight(const KernelDesc &kernel, const Schedule &schedule) {
  const GemmLayout layout = gemmLayout(kernel, schedule);
  if (!layout.quantized())
    throw std::runtime_error("only int8 and q4 weights are pre-quantized, not " + kernel.precision);
  const int N = static_cast<int>(layout.N);
  const int rowBytes = static_cast<int>(layout.q4 ? 16 * layout.q4Blocks : layout.K);
  const int blocks = static_cast<int>(layout.q4Blocks);
  ImageParam values(layout.q4 ? UInt(8) : Int(8), 2, "values"); // (byte or k, n)
  ImageParam scales(layout.q4 ? UInt(16) : Float(32), layout.q4 ? 2 : 1, "scales");
  values.dim(0).set_bounds(0, rowBytes).dim(1).set_bounds(0, N).set_stride(rowBytes);
  values.set_estimates({{0, rowBytes}, {0, N}});
  if (layout.q4) {
    scales.dim(0).set_bounds(0, blocks).dim(1).set_bounds(0, N).set_stride(blocks);
    scales.set_estimates({{0, blocks}, {0, N}});
  } else {
    scales.dim(0).set_bounds(0, N);
    scales.set_estimates({{0, N}});
  }
  return packKernel(definePackedFromQuantized(values, scales, layout), {values, scales}, kernel,
                    schedule);
}

LoweredKernel lowerPackWeight(const KernelDesc &kernel, const Schedule &schedule) {
  GemmLayout layout = gemmLayout(kernel, schedule);
  std::vector<BufferShape> sig = kernelSignature(kernel);
  ImageParam w = makeInput(sig[1], "weight"); // (k, n)
  w.set_estimates({{0, static_cast<int>(layout.K)}, {0, static_cast<int>(layout.N)}});
  return packKernel(definePackedWeight(w, layout), {w}, kernel, schedule);
}

} // namespace tmc::halide
