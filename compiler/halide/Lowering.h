//===- Lowering.h - Kernels as Halide pipelines -----------------*- C++ -*-===//
//
// Each kernel kind has an algorithm (Halide Funcs) and applies a `Schedule`
// given to it; nothing here chooses tile sizes. Buffers follow
// `kernelSignature`: dense, dimension 0 innermost, the token count as the
// only run-time extent, every static extent and stride declared so that
// Halide compiles constant strides and checks the rest at entry.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"
#include "compiler/Schedule.h"

#include "Halide.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace tmc::halide {

struct LoweredKernel {
  Halide::Func output;
  std::vector<Halide::Argument> arguments; ///< inputs, in signature order
  std::vector<Halide::Func> stages;        ///< every Func, producers first (for --emit=halide)
};

/// Builds the algorithm of `kernel` and applies `schedule`.
LoweredKernel lowerKernel(const KernelDesc &kernel, const Schedule &schedule);

// Helpers shared by the per-kind lowerings.

/// An input with the shape, dense strides and zero mins of `shape`. The
/// dimensions in `bufferExtents` take their extents from the buffer passed at
/// run time (`shape`'s are an example), the strides outside them following.
Halide::ImageParam makeInput(const BufferShape &shape, const std::string &name,
                             std::initializer_list<int> bufferExtents = {});
/// An attention's key or value element as f32: as stored, or the f16 or bf16
/// word of a kv_cache = f16 | bf16 cache widened (exactly) by integer
/// operations (HalfBits.h), per `kernel.kvPrecision`.
Halide::Expr keyValueElement(const Halide::Expr &stored, const KernelDesc &kernel);
/// Declares the output buffer's static extents and dense strides.
void constrainOutput(Halide::Func &output, const BufferShape &shape);

/// The tail of `extent` values split into vectors of `width`: RoundUp where
/// whole vectors cover it, else GuardWithIf. (An update stage's default for
/// a pure variable is RoundUp, which writes past an output it does not
/// divide; ShiftInwards would add the overlap of a sum twice.)
Halide::TailStrategy vectorTail(int64_t extent, int width);
/// Estimates of a buffer whose extents are all known: [0, extent) each.
Halide::Region estimatesOf(const BufferShape &shape);
/// act(x) for "none", "relu", "gelu", "gelu_tanh", "silu", "tanh".
Halide::Expr applyActivation(const Halide::Expr &x, const std::string &kind);
/// Sinusoidal encoding of feature `c` at position `t` for width `d`, in double
/// (on CPUs without a libm call: Trigonometry.h).
Halide::Expr sinusoid(const Halide::Expr &c, const Halide::Expr &t, int64_t d, bool gpu);

/// y = act(x W^T + b) taking the weight as stored ([N, K]); packs it into
/// panels inside the pipeline on every call (kernelSignature(kernel)).
LoweredKernel lowerLinear(const KernelDesc &kernel, const Schedule &schedule);
/// The same GEMM taking the weight already packed by `lowerPackWeight`: its
/// argument 1 has `packedWeightShape(kernel, schedule)` (LowerPack.cpp).
LoweredKernel lowerPackedLinear(const KernelDesc &kernel, const Schedule &schedule);
/// The load-time kernel: weight (k, n) [K, N] -> packed panels (j, k, p).
LoweredKernel lowerPackWeight(const KernelDesc &kernel, const Schedule &schedule);
/// An int8 or q4 GEMM's pack kernel from a pre-quantized weight (`tmc
/// quantize`'s file): its values and scales in, the same panels out
/// (LowerPack.cpp's contract).
LoweredKernel lowerPackQuantizedWeight(const KernelDesc &kernel, const Schedule &schedule);
/// The packed weight's shape: {P, K, panels} with P = gemmLayout().panelWidth.
BufferShape packedWeightShape(const KernelDesc &kernel, const Schedule &schedule);
/// The packing algorithm: `packed`, and the statistics it reads, which are
/// its own stages: int8's per channel (absolute maximum, quantized row sum),
/// q4's per block of a channel (largest value, f16 scale).
struct PackedWeightFuncs {
  Halide::Func packed;
  std::vector<Halide::Func> channelStats;
};
/// packed(j, k, p) = weight(k, p * P + j), zero past N; bf16, int8 and q4 as
/// LowerPack.cpp's contract says.
PackedWeightFuncs definePackedWeight(const Halide::Func &weight, const GemmLayout &layout);
/// Schedules `definePackedWeight`'s Funcs: panels in parallel, vectorized
/// along j; int8 and q4 statistics computed once each, channels in parallel.
void schedulePackedWeight(PackedWeightFuncs &funcs, const GemmLayout &layout,
                          const Schedule &schedule);
/// GPU schedules (GpuSchedule.cpp), applied instead of the CPU ones when
/// `schedule.gpu`: the GEMM's (called by its lowering, which owns the Funcs)
/// and every other kind's, applied by `lowerKernel` to the stages it returns.
/// The Funcs of one GEMM that its schedules place (LowerLinear.cpp defines
/// them; those a precision has no use for stay undefined): the output, the
/// accumulator, the clamped tokens and the packed weight; for reduced
/// precision the per-call stages: the rows' absolute maxima (int8, q4), the
/// tokens as bf16 pairs or u8/s8 quads, and q4's token sums per block and
/// int32 sums per block.
struct GemmStages {
  Halide::Func out, acc, tokens, packed;
  Halide::Func rowMax, roundedTokens, tokenBlockSums, blockSums;
};
void scheduleGemmGpu(const GemmStages &gemm, const GemmLayout &layout, const Schedule &schedule);
void scheduleForGpu(const KernelDesc &kernel, LoweredKernel &lowered, const Schedule &schedule);
/// Fused attention; with `schedule.keyBlock > 0` it takes lowerAttentionBlocked.
LoweredKernel lowerAttention(const KernelDesc &kernel, const Schedule &schedule);
/// Attention walking the keys in blocks with an online softmax (flash attention).
LoweredKernel lowerAttentionBlocked(const KernelDesc &kernel, const Schedule &schedule);
LoweredKernel lowerEmbed(const KernelDesc &kernel, const Schedule &schedule);
LoweredKernel lowerAddPositions(const KernelDesc &kernel, const Schedule &schedule);
LoweredKernel lowerAddSegments(const KernelDesc &kernel, const Schedule &schedule);
LoweredKernel lowerElementwise(const KernelDesc &kernel, const Schedule &schedule);
LoweredKernel lowerNorm(const KernelDesc &kernel, const Schedule &schedule);
/// The halves of `c` (a head of 2 * half, or a rope table row) in turn,
/// unrolled, each vectorized on its own; rows `t` in parallel as a row-wise
/// kernel's (Schedule::parallelMinRows). Vectorized across the whole head,
/// every vector of a rope's selects became gathers (the kernel took 4-5% of
/// a small model's prefill, at several ns per element). A half that is not a
/// whole number of vectors ends in a predicated one (a vector shifted inwards
/// would read the other half through a clamp, lane by lane).
void scheduleByHalves(Halide::Func &out, Halide::Var c, Halide::Var t, int half,
                      const Schedule &schedule);
LoweredKernel lowerRope(const KernelDesc &kernel, const Schedule &schedule);
LoweredKernel lowerRopeTable(const KernelDesc &kernel, const Schedule &schedule);
LoweredKernel lowerPool(const KernelDesc &kernel, const Schedule &schedule);
LoweredKernel lowerSeqProject(const KernelDesc &kernel, const Schedule &schedule);

} // namespace tmc::halide
