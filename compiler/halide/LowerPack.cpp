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
//===----------------------------------------------------------------------===//

#include "compiler/halide/Lowering.h"

using namespace Halide;

namespace tmc::halide {

BufferShape packedWeightShape(const KernelDesc &kernel, const Schedule &schedule) {
  GemmLayout l = gemmLayout(kernel, schedule);
  BufferShape shape;
  if (l.bf16) {
    shape.extents = {2, l.panelWidth, l.kPairs, l.panels};
    shape.isBF16 = true;
  } else {
    shape.extents = {l.panelWidth, l.K, l.panels};
  }
  return shape;
}

Func definePackedWeight(const Func &weight, const GemmLayout &layout) {
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
    return packed;
  }
  packed(j, k, p) = select(n < N, weight(k, min(n, N - 1)), 0.0f);
  return packed;
}

void schedulePackedWeight(Func &packed, const GemmLayout &layout, const Schedule &schedule) {
  if (layout.bf16) {
    // Pairs of adjacent source floats, a panel row of P pairs at a time.
    Var e = packed.args()[0], j = packed.args()[1], k = packed.args()[2], p = packed.args()[3];
    packed.bound(e, 0, 2).reorder(e, j, k, p).unroll(e).vectorize(j, layout.vectorWidth,
                                                                   TailStrategy::GuardWithIf);
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

LoweredKernel lowerPackWeight(const KernelDesc &kernel, const Schedule &schedule) {
  GemmLayout layout = gemmLayout(kernel, schedule);
  std::vector<BufferShape> sig = kernelSignature(kernel);
  ImageParam w = makeInput(sig[1], "weight"); // (k, n)
  w.set_estimates({{0, static_cast<int>(layout.K)}, {0, static_cast<int>(layout.N)}});
  Func packed = definePackedWeight(w, layout);
  constrainOutput(packed, packedWeightShape(kernel, schedule));
  if (layout.bf16)
    packed.set_estimates({{0, 2},
                          {0, layout.panelWidth},
                          {0, static_cast<int>(layout.kPairs)},
                          {0, static_cast<int>(layout.panels)}});
  else
    packed.set_estimates({{0, layout.panelWidth},
                          {0, static_cast<int>(layout.K)},
                          {0, static_cast<int>(layout.panels)}});
  schedulePackedWeight(packed, layout, schedule);
  return {packed, {w}, {packed}};
}

} // namespace tmc::halide
