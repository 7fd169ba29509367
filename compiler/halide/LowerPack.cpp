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
//===----------------------------------------------------------------------===//

#include "compiler/halide/Lowering.h"

using namespace Halide;

namespace tmc::halide {

BufferShape packedWeightShape(const KernelDesc &kernel, const Schedule &schedule) {
  GemmLayout l = gemmLayout(kernel, schedule);
  BufferShape shape;
  shape.extents = {l.panelWidth, l.K, l.panels};
  return shape;
}

Func definePackedWeight(const Func &weight, const GemmLayout &layout) {
  const int P = layout.panelWidth;
  const int N = static_cast<int>(layout.N);
  Var j("j"), k("k"), p("p");
  Expr n = p * P + j;
  Func packed("packed_weight");
  packed(j, k, p) = select(n < N, weight(k, min(n, N - 1)), 0.0f);
  return packed;
}

void schedulePackedWeight(Func &packed, const GemmLayout &layout, const Schedule &schedule) {
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
  packed.set_estimates({{0, layout.panelWidth},
                        {0, static_cast<int>(layout.K)},
                        {0, static_cast<int>(layout.panels)}});
  schedulePackedWeight(packed, layout, schedule);
  return {packed, {w}, {packed}};
}

} // namespace tmc::halide
