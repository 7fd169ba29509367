//===- Schedule.cpp - Default schedules and the GEMM layout ---------------===//

#include "compiler/Schedule.h"

#include "compiler/Error.h"
#include "compiler/KernelDesc.h"
#include "compiler/ScheduleFields.h"
#include "compiler/Target.h"
#include "runtime/thread_pool.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace tmc {

std::string Schedule::str() const {
  std::string out;
  for (const ScheduleField &field : scheduleFields())
    if (field.printedIn(*this))
      out += (out.empty() ? "" : " ") + std::string(field.key) + "=" +
             std::to_string(field.get(*this));
  return out;
}

std::string Schedule::fingerprint() const {
  // A field added to Schedule must be in the field table, which this prints.
  static_assert(sizeof(Schedule) == 80, "a Schedule field was added: add it to ScheduleFields.cpp");
  std::string out;
  for (const ScheduleField &field : scheduleFields())
    out.append(field.key).append("=").append(std::to_string(field.get(*this))).append("\n");
  return out;
}

bool gpuSchedulesOnHost() {
  static const bool onHost = [] {
    const char *flag = std::getenv("TMC_GPU_SCHEDULE_ON_HOST");
    return flag && flag[0] == '1';
  }();
  return onHost;
}

namespace {

/// The widest f32 layer (output features) whose GEMM reads its tokens in
/// place rather than packed per row tile (defaultSchedule, AVX-512).
constexpr int64_t kNarrowUnpackedWidth = 384;

/// The deepest f32 sum (K) whose GEMM takes 4-row tiles with its tokens in
/// place, in layers of at most kShortSumMaxWidth features (defaultSchedule,
/// AVX-512): wider ones are vocabulary heads, with a tile of their own.
constexpr int64_t kShortSumDepth = 192;
constexpr int64_t kShortSumMaxWidth = 4096;

/// The most panels a layer's GEMM may have for its (panel, row tile) pairs
/// to be its parallel tasks by default (defaultSchedule, AVX-512 f32).
constexpr int64_t kFewPanels = 8;

/// The layer's width rounded up to whole panels (or vectors) of `multiple`.
int64_t paddedWidth(const KernelDesc &kernel, int multiple) {
  return static_cast<int64_t>(llvm::alignTo(kernel.width, multiple));
}

/// Vocabulary heads (below): at least this many output features, at most
/// this many input features (the range measured).
constexpr int64_t kHeadMinWidth = 8192;
constexpr int64_t kHeadMaxDepth = 768;

/// An AVX-512 f32 GEMM whose weights do not stay in cache (the caller checks
/// that they take more than 4 MiB) and whose width is a vocabulary's, of K
/// <= kHeadMaxDepth.
bool isVocabularyHead(const KernelDesc &kernel, const TargetInfo &target) {
  return target.isa == Isa::AVX512 && kernel.precision == "f32" && kernel.width >= kHeadMinWidth &&
         kernel.inWidth <= kHeadMaxDepth;
}

/// The most weight bytes a group of a head's panels (Schedule::panelGroup)
/// holds: what each row tile reads from L2 (1 MiB on Zen 4) across the
/// group, K 256 x 16 panels of 16.
constexpr int64_t kPanelGroupBytes = 256 << 10;
constexpr int kMaxPanelGroup = 16;

/// Such heads take 1 vector x 8 rows (tokens packed, K unrolled by 4 as
/// above), each row tile passing through a group of up to 16 panels (256
/// KiB of weights) before the next. In-model profiles (TMR_PROFILE, 3
/// interleaved rounds each, 2 threads, Zen 4, 2026-11-29), the head at 128
/// tokens, ms, first 1 x 8 alone against the tile the width would
/// otherwise take (4 x 6):
///
///   K x N          1 x 8          4 x 6 (or as noted)
///   128 x 32000    4.94-5.02      5.22-5.23; 2 x 2 in place 4.94-5.18
///   160 x 16384    3.15-3.20      2 x 2 in place 3.36-3.41
///   192 x 32000    7.38-7.46      7.66-7.78; 2 x 2 in place 7.37-7.74
///   256 x 32000    9.68-9.83      10.03-10.21
///   288 x 32000    10.82-10.89    11.64-11.78 (5 x 4 11.08-11.23)
///   320 x 32000    11.93-12.48    12.71-13.56
///   384 x 32000    14.12-14.15    14.80-15.33 (5 x 4 14.39-14.47)
///   512 x 32000    19.10-19.15    19.88-20.48
///   768 x 32000    28.27-28.77    29.22-29.52
///   128 x 50304    7.96-8.01      8.19-8.38
///
/// A likely reason: a panel of 16 features holds 16 x K weights (8 KiB at
/// K 128, 48 at 768), which the row tiles read again from L1 or close to
/// it, where 4 x 6's 64-wide panels are four times that. Alone, 1 x 8 lost
/// where output rows are off cache lines (K 128 x N 50257: 8.86-8.99 against
/// 8.85-9.03 for 3 x 8, where N 50256 took 7.86-8.01; K 256 x N 50257 3-7%
/// slower than 3 x 8): each panel wrote its output as a strip 16 features
/// wide and all T rows tall, each row's piece sharing its first and last
/// line with the neighbouring panels' pieces, written a whole strip later.
/// With the panels in groups, each row tile writes runs of 16 panels, and
/// the narrow heads (whose output is as many bytes as their weights) gained
/// on either width, against 1 x 8 alone on aligned rows and 3 x 8 on the
/// others:
///
///   K x N          groups of 16   alone
///   128 x 50256    7.28-7.39      7.86-8.01 (groups of 8: 7.39-7.41)
///   128 x 50257    7.42-7.58      3 x 8 8.84-9.45 (groups of 8: 7.50-7.59)
///   256 x 50257    14.57-14.87    3 x 8 16.21-16.68 (groups of 8: 14.67-15.10)
///
/// and level from K 320 up (320 x 32000: 11.89-12.19 in groups of 16 or 9,
/// 11.95-12.15 alone; 768 x 50257, GPT-2's head: 44.4-45.2 in groups of 4,
/// 44.8-45.5 for 3 x 8), where each output takes more products.
///
/// That is Zen 4's tile, where each zmm FMA takes two 256-bit halves of one
/// unit (TargetInfo::splitsZmm). Cores that run two full-width FMAs a cycle
/// (Zen 5) need the loads of 1 x 8 (a broadcast per FMA) twice as fast, and
/// there 3 x 8 (in panel groups of the same bytes) ran the heads fastest of
/// 1 x 8, 3 x 8, 4 x 6 and 2 x 12: bench/kernels --shapes narrow, 2 threads,
/// AMD EPYC Zen 5, 2026-11-30, K 128-768 x N 32000 and 50257 at 128 tokens:
/// 320-341 GFLOP/s against 295-310 for 1 x 8 (oneDNN's sgemm 334-365; 2 x 12
/// within 3% of 3 x 8, 4 x 6 2-8% below it).
void useVocabularyHeadTile(const KernelDesc &kernel, const TargetInfo &target, Schedule &s) {
  s.tileCols = (target.splitsZmm ? 1 : 3) * s.vectorWidth;
  s.tileRows = 8;
  const int64_t panelBytes = int64_t(4) * s.tileCols * kernel.inWidth;
  s.panelGroup = static_cast<int>(
      std::clamp<int64_t>(kPanelGroupBytes / std::max<int64_t>(1, panelBytes), 0, kMaxPanelGroup));
  if (s.panelGroup < 2)
    s.panelGroup = 0;
}

/// GPU blocks: a GEMM block is one 64-feature panel by 16 tokens, 256
/// threads of 4 rows each (the decode GEMV: one row, a thread per feature),
/// staging 16-step slabs of tokens and weights in shared memory; row-wise
/// kernels take 256 threads along the features.
Schedule defaultGpuSchedule(const KernelDesc &kernel, const TargetInfo &target) {
  Schedule s;
  s.gpu = true;
  s.vectorWidth = target.vectorWidth; // the host-side pack kernels' vectors
  int64_t roundedWidth = paddedWidth(kernel, s.vectorWidth);
  s.tileCols = static_cast<int>(std::min<int64_t>(64, std::max<int64_t>(8, roundedWidth)));
  s.tileRows = 4;
  s.kBlock = 0; // the GPU GEMM stages K in gpuKChunk slabs instead
  s.unrollK = 1;
  s.queryTile = 8;
  s.parallel = true;
  return s;
}

/// A linear with a rotary epilogue turns its heads in the register tile
/// when a panel holds whole heads (LowerLinear.cpp), else in a second pass
/// over its output. The tile takes the multiple of head_dim nearest its
/// width (the wider on a tie), with as many of its rows as `accumulators`
/// registers hold and the register file holds beside them with the tile's
/// weight vectors and the broadcast, if that leaves 2 rows or more (AVX-512
/// and NEON: heads up to 128 wide, 2 rows of 128; AVX2: up to 40, 2 rows);
/// otherwise it keeps its shape. In model, 128 tokens, 8 interleaved rounds
/// (Zen 4, 2026-11-30), q/k/v and rope per prompt: t128v16384 0.52 ms
/// against 0.52 + 0.12 (the rope kernel and its table), readme256 0.52
/// against 0.51 + 0.06, rope320 2.40 against 2.31 + 0.09 (2.38 turned in a
/// second pass after 48 x 8 tiles).
///
/// Its tasks are chosen as any layer's (defaultSchedule: (panel, row tile)
/// pairs for a few panels, else panels). It took (panel, row tile) tasks
/// whatever its width, measured on rope320 at 128 tokens on the Zen 4 (2.40
/// ms against 2.51 with panel tasks, its 15 panels split 8 to 7). On the
/// Zen 5 (2 threads, interleaved rounds, 2026-12-02) panel tasks took the
/// long-context decoder's q/k/v (K 256 x N 768, 12 panels, chunks of 512
/// tokens) 0.59-0.65 ms a call against 0.69-0.76 (two sets of 3 rounds) and
/// its 4096-token prefill 134.7-135.8 ms against 139.2-141.5 (the quieter
/// set); `tmc tune --tokens 512` picked the same. The small models'
/// 128-token prefills (rope320, readme256, gqa384, stories15m, t224, s160,
/// s192, narrow128, t128v16384) came out within 1% either way.
void fitTileToHeads(const KernelDesc &kernel, int accumulators, int registers, Schedule &s) {
  const int headDim = static_cast<int>(kernel.headDim), vw = s.vectorWidth;
  if (headDim <= 0 || s.tileCols % headDim == 0)
    return;
  auto rowsFor = [&](int vectors) {
    return std::min({s.tileRows, accumulators / vectors, maxRegisterTileRows(vectors, registers)});
  };
  int best = 0;
  for (int cols = headDim; cols / vw <= accumulators / 2; cols += headDim)
    if (cols % vw == 0 && rowsFor(cols / vw) >= 2 &&
        (best == 0 || std::abs(cols - s.tileCols) <= std::abs(best - s.tileCols)))
      best = cols;
  if (best == 0)
    return;
  s.tileCols = best;
  s.tileRows = rowsFor(best / vw);
}

} // namespace

int defaultParallelMinRows(const KernelDesc &kernel) {
  if (!rowTasks(kernel))
    return 0;
  const int64_t rowElements = std::max<int64_t>(
      1, kernel.kind == KernelKind::rope ? kernel.heads * kernel.headDim : kernel.width);
  return static_cast<int>((tmr::kPoolMinValues + rowElements - 1) / rowElements);
}

Schedule defaultSchedule(const KernelDesc &kernel, const TargetInfo &target) {
  if (target.gpu || gpuSchedulesOnHost())
    return defaultGpuSchedule(kernel, target);
  Schedule s;
  s.vectorWidth = target.vectorWidth;
  const bool avx512 = target.isa == Isa::AVX512, neon = target.isa == Isa::NEON;
  // AVX-512: 4 vectors x 6 rows = 24 of the 32 zmm registers accumulate, 4
  // hold the weight row and 1 the broadcast token value (most GEMMs take 3 x
  // 8 instead, below; a wider or taller tile spills). AVX2: 3 x 4 =
  // 12 of the 16 ymm registers, 3 for the weights and 1 for the broadcast;
  // it measured 1-5% above BLIS's 2 x 6 here, and its 3 independent chains
  // per row help the one-row decode tile. NEON has 32 q registers of 4
  // lanes, the AVX-512 register budget: the same 4 x 6 tile, 16 columns.
  s.tileCols = (avx512 || neon ? 4 : 3) * s.vectorWidth;
  s.tileRows = avx512 || neon ? 6 : 4;
  if (kernel.kind == KernelKind::linear) {
    // Blocking K keeps a block of the weight panel in cache while every row
    // tile of the tokens passes over it, at the price of storing partial sums
    // per block. Measured on the GPT-2/BERT shapes (bench/kernels/README.md):
    // for K <= 1024, blocks of 384 (AVX2) win 3-6% (AVX-512 runs unblocked:
    // below); for K = 3072, AVX2 runs fastest with blocks of 256. NEON (not
    // measured on hardware: this machine only emulates it): blocks of 256
    // keep a 16 KiB panel block in even a 32 KiB L1.
    const bool longK = kernel.inWidth > 1024;
    if (neon)
      s.kBlock = 256;
    else
      s.kBlock = longK ? 256 : 384;
    s.unrollK = 1;
    // AVX-512 GEMMs: 3 vectors x 8 rows (24 zmm accumulators again), K
    // unblocked. It beat 4 x 6 with K blocks of 128 by 3-8% on every GPT-2
    // shape of K 768 on an AMD Zen 4 (bench/kernels, 2026-11-25), and `tmc
    // tune` picked 48 x 8 for three of GPT-2's GEMMs on the Intel machine too
    // (bench/results/tune/run2-p10); 8 rows also divide the usual prompt
    // lengths, where 6 computes 4 clamped rows of 132 at T = 128. Widths that
    // 64 divides and 48 does not (256, 512, 1024, 32000: up to 5% padding in
    // panels of 48) keep the 4 x 6 tile, K unblocked too: the small-model
    // sweep (bench/kernels --shapes narrow, K 128-768 x N 384-50257, Intel
    // Xeon, 2026-11-27) found blocks of 128 no better on the narrow layers
    // (within +-5%) and 10-20% slower on vocabulary heads (N 32000 and
    // 50257), whose panel-sized partial sums cost a trip through memory per
    // block.
    // f32 on AVX-512 unrolls K by 4 (the tile's loads and FMAs of four steps
    // scheduled together): `tmc tune` picked it for 6 of the 7 GEMMs of a
    // small rope decoder (bench/e2e/small/rope320.tm, Intel Xeon,
    // 2026-11-27), and end to end it made prefill of 128 tokens faster at 2
    // threads by 7% on GPT-2 small (131 -> 122 ms), 5% on BERT base and 4% on
    // rope320, at 1 thread by 9% on GPT-2; decoding steps within the noise.
    if (avx512) {
      s.kBlock = 0;
      if (kernel.precision == "f32")
        s.unrollK = 4;
      if (!(kernel.width % 64 == 0 && kernel.width % 48 != 0)) {
        s.tileCols = 3 * s.vectorWidth;
        s.tileRows = 8;
      }
    }
    // Layers of kNarrowUnpackedWidth features or fewer read their tokens in
    // place (LowerLinear.cpp's x_tiles off): the packing pass costs M x K
    // whatever N is, the products M x K x N, and below that width the pass
    // cost more than the broadcasts it simplifies. `tmc tune` with the
    // default budget turned packing off in every layer of N 128-384 of four
    // small models (Zen 4, 2026-11-29: 1.21-1.26x on its own in the tuner's
    // harness; bench/results/tune/small-zen4-2026-11-29-default); in-model
    // (3 interleaved rounds) K 1024 x N 256 took 0.312 against 0.337 ms,
    // K 864 x N 320 0.389 against 0.413, and a Longformer's K 1024 x N 256
    // at 4096 tokens 9.7-9.9 against 10.0-10.8. Measured on AVX-512 only.
    if (avx512 && kernel.width <= kNarrowUnpackedWidth)
      s.packTokens = false;
    // Short sums (K <= kShortSumDepth) outside vocabulary heads: 4-row tiles
    // (3 or 4 vectors wide, as chosen above), the tokens read in place. End
    // to end at 128 tokens, 2 threads, 8 paired rounds (Zen 4, 2026-11-29,
    // each model's GEMMs of K <= 192 and N <= 4096 through a tuning
    // database): t128v16384 5.28-5.34 ms (min-median) against 5.38-5.54,
    // narrow128 6.11-6.15 against 6.19-6.24, s192 11.04-11.14 against
    // 11.16-11.27, s128v50257 8.89-9.14 against 9.04-9.18, s160 within the
    // noise; in-model, t128v16384's gate/up (K 128 x N 768) took 0.99 ms a
    // prompt against 1.06 (4 rows and in place; in place alone: 1.05), and
    // `tmc tune` took 4-row tiles on its K 128 layers too. Layers of K 224-512
    // (readme256, rope320, gqa384, t224, llama-style) came out -3% to +2%,
    // within the noise: they keep the tiles above.
    if (avx512 && kernel.precision == "f32" && kernel.inWidth <= kShortSumDepth &&
        kernel.width <= kShortSumMaxWidth) {
      s.tileRows = 4;
      s.packTokens = false;
    }
    // bf16 (vdpbf16ps: 16 lanes, each the sum of a pair of products): 2
    // vectors x 12 rows, K unblocked, ran 390 GFLOP/s at 2 threads on the
    // Zen 4 (GPT-2's 128 x 768 x 3072; 1.8x the f32 tile's rate) against
    // 210-265 for 4 x 6 and 3 x 8: each pair-step loads twice the K of an
    // f32 step, so fewer columns and more rows balance loads and products.
    // int8 (vpdpbusd: 16 lanes, each the sum of four u8 x s8 products) takes
    // the same tile: each quad-step loads four times the K of an f32 step.
    if (avx512 && (kernel.precision == "bf16" || kernel.precision == "int8")) {
      s.tileCols = 2 * s.vectorWidth;
      s.tileRows = 12;
      s.kBlock = 0;
    }
    // q4 keeps a second register tile, each block's int32 sums, beside the
    // f32 accumulators: 2 vectors x 6 rows of each (24 zmm; AVX2 x 3 rows,
    // 12 ymm). Its blocks are summed in f32, so K is never blocked.
    // With AVX512-VNNI (the dot-product variant) it takes 3 vectors x 4 rows
    // (24 zmm again) where panels of 48 pad the width by no more than 1%
    // beyond panels of 32: a decoding step's one-row tile then spends a
    // block's activation broadcasts, its scalar correction and its loop on
    // 48 features instead of 32, and GPT-2 small's q4 steps took 2.66 ms
    // against 3.20 (median of 5 interleaved rounds, 2 threads, Zen 4,
    // 2026-11-29; its prompt of 128 tokens 66.9 against 66.4 ms). 4 x 3 made
    // the prompt 10% slower. Plain AVX-512, which widens the bytes instead
    // (more registers in flight), keeps 2 x 6: not measured.
    if (kernel.precision == "q4") {
      s.tileCols = 2 * s.vectorWidth;
      s.tileRows = avx512 || neon ? 6 : 3;
      s.kBlock = 0;
      const int wide = 3 * s.vectorWidth;
      if (avx512 && target.dotProducts &&
          paddedWidth(kernel, wide) * 100 <= paddedWidth(kernel, s.tileCols) * 101) {
        s.tileCols = wide;
        s.tileRows = 4;
      }
    }
    // Long runs go in blocks of tokens whose packed f32 rows take about
    // 1 MiB (256 rows at K = 1024; 64 to 512 rows), where the weights take
    // 4 MiB or less in f32 and so stay in cache while every block reads them once
    // (LowerLinear.cpp). The Longformer-style encoder of
    // bench/e2e/long_context.py (K 256 and 1024) prefilled 16384 tokens in
    // 537 ms against 706 without blocks and 4096 in 126 against 152 (Intel
    // Xeon, 2 threads, 2026-11-27; blocks of 128 to 512 rows within the
    // noise of each other). GPT-2 small's 154 MB vocabulary head, blocked,
    // went from 218 to 248 ms at 1024 tokens, each block reading it from
    // memory again: hence the bound on the weights.
    const int64_t weightBytes = 4 * kernel.inWidth * kernel.width;
    if (weightBytes <= (int64_t(4) << 20))
      s.tokenBlock = static_cast<int>(
          std::clamp<int64_t>((int64_t(1) << 18) / std::max<int64_t>(1, kernel.inWidth), 64, 512));
    else if (isVocabularyHead(kernel, target))
      useVocabularyHeadTile(kernel, target, s);
    // Narrow layers: a tile wider than the layer only computes padding.
    s.tileCols =
        static_cast<int>(std::min<int64_t>(s.tileCols, paddedWidth(kernel, s.vectorWidth)));
    // A tile whose accumulators, weight vectors and broadcast outnumber the
    // registers spills (the count `tmc tune` refuses candidates by,
    // SearchSpace::valid): on AVX2 (16 ymm) heads of 32 took 4 x 3 (17) and
    // heads of 48 6 x 2 (19) for the 12 accumulators, and LLVM reloaded an
    // accumulator from the stack in the inner loop (perf annotate, t224's
    // q/k/v). Now 4 x 2 and, for 48, the 3 x 4 tile with the turn in a
    // second pass. In model, 128 tokens, 3 interleaved rounds (AMD EPYC Zen 3,
    // AVX2, 2 threads, 2026-12-01), the q/k/v GEMM and its turn per prompt:
    // stories15m (heads of 48) 2.59-2.62 ms against 5.10-5.15, t224 (32)
    // 1.69-1.81 against 3.07-3.12 (the 3 x 4 tile and a second pass:
    // level with 4 x 2), s160, narrow128 and readme256 (32) 1.7-1.9x faster;
    // prefill 3-10% faster (stories15m 25.0-25.5 against 27.9-28.2 ms).
    // AVX-512's heads of 128 (8 x 3: 33 zmm) take 8 x 2 by the same count,
    // not measured.
    // q4 keeps a second register tile beside the f32 one (its blocks' int32
    // sums, below): half the registers are its accumulators.
    if (kernel.ropeColumns > 0)
      fitTileToHeads(kernel, (avx512 || neon ? 24 : 12) / (kernel.precision == "q4" ? 2 : 1),
                     target.vectorRegisters, s);
    // Layers of kFewPanels panels or fewer (N <= 512 in panels of 64) split
    // unevenly when the panels are the tasks (5 panels of 64 for N = 320:
    // 3 and 2 on 2 threads): their (panel, row tile) pairs are the tasks
    // instead, rows outer (each thread's share is then the rows its norms
    // and attention before and after touch: runtime/thread_pool.cpp), token
    // blocks kept (LowerLinear.cpp). Not with a bias: a (panel, row tile)
    // task reads its panel's bias clamped to N lane by lane (LowerLinear.cpp's
    // init), where a loop over panels leaves the clamp to its last panel.
    // `tmc tune` picked row tasks for rope320's K 320 and 864 x N 320
    // layers (1.13-1.14x on their own; AMD EPYC Zen 5, 2 threads,
    // 2026-11-30); in-model (TMR_PROFILE, best of 3 runs, paired with the
    // panel tasks), its K 320 x N 320 took 0.085-0.087 ms a call against
    // 0.110-0.114, the K 864 layers level (0.20-0.24 either way). Rows
    // outer for wider layers lost: rope320's gate/up (N 1728, 36 panels)
    // 0.435 against 0.386 ms, each thread then reading all its weights.
    if (avx512 && kernel.precision == "f32" && !kernel.hasBias &&
        paddedWidth(kernel, s.tileCols) / s.tileCols <= kFewPanels)
      s.parallelRows = s.rowsOuter = true;
  }
  // Attention: the online softmax over blocks of 64 keys beat the one-pass
  // form at every length measured (GPT-2 small heads, causal, AVX-512,
  // bench/kernels, one thread: 0.45 vs 0.99 ms at T = 128, 5.1 vs 17.3 ms at
  // T = 512; AVX2 likewise); blocks of 32 or 128 were slower, query tiles of
  // 32 were 1-3% faster than 16 or 64. keyBlock = 0 selects the one-pass form.
  s.queryTile = 32;
  s.keyBlock = 64;
  s.parallel = true;
  // Row-wise kernels: a call's rows go to the thread pool only when they hold
  // tmr::kPoolMinValues (2^14) values or more. The bound was 2^17 while
  // Halide's pool slept between loops: waking its second thread took 20-30
  // us a call on the Intel Xeon (2 vCPUs), more than such a kernel's whole
  // prompt of 128 rows takes alone on small models (an rmsnorm of d 128 ran
  // 32 us at 2 threads against 10 at one; bench/e2e/small_models.py,
  // 2026-11-27 14:16). tmc's own pool (runtime/thread_pool.cpp) keeps its
  // workers spinning between a pass's loops; with it, every row-wise kernel
  // of a 128-token prompt in parallel (Zen 4, 2 threads, in-model profiles,
  // 4 interleaved rounds, 2026-11-29): a d-128 decoder's (8 layers, 16384
  // tokens) rope, gated SiLU, norms and embedding 0.30-0.44 ms a prompt
  // against 0.38-0.63 serial, prefill 1-3% faster (narrow128 6.58-6.87 ms
  // against 6.74-7.00); GPT-2 small's norms and embedding 0.60-0.67 ms
  // against 0.81-1.02. A decoding step's one row gains nothing from the pool
  // (its norms a few us slower in parallel), and 2^14 values keep batched
  // steps of up to 21 sequences of d 768 serial as before (not measured).
  s.parallelMinRows = defaultParallelMinRows(kernel);
  // Kernels no decoding step calls never run one row at a time.
  s.decodeVariant = kernel.decodeVariant;
  return s;
}

Schedule gemvSchedule(const Schedule &gemm) {
  Schedule s = gemm;
  s.gpuTileRows = 1;
  s.gpuRowsPerThread = 1;
  return s;
}

Schedule decodeAttentionSchedule(const Schedule &attention) {
  Schedule s = attention;
  s.keyBlock = 0;
  s.queryTile = 1;
  s.keysAt = 0;
  return s;
}

Schedule decodeRowsAttentionSchedule(const Schedule &attention) {
  Schedule s = decodeAttentionSchedule(attention);
  s.parallel = false;
  return s;
}

std::string decodeRowsKernelSuffix(const KernelDesc &kernel, const Schedule &schedule) {
  return decodeKernelSuffix(kernel, schedule) == "_decode" ? "_decode_rows" : "";
}

std::string decodeKernelSuffix(const KernelDesc &kernel, const Schedule &schedule) {
  if (kernel.kind == KernelKind::linear && schedule.gpu && schedule.decodeVariant)
    return "_gemv";
  // From the kernel, not the schedule: a database's schedule may say
  // otherwise for one ISA of a multi-ISA target, and the executor and the
  // kernels it links must agree on which kernels exist.
  if (kernel.kind == KernelKind::attention && !schedule.gpu && kernel.decodeVariant)
    return "_decode";
  return "";
}

Schedule decodeKernelSchedule(const KernelDesc &kernel, const Schedule &schedule) {
  return kernel.kind == KernelKind::linear ? gemvSchedule(schedule)
                                           : decodeAttentionSchedule(schedule);
}

llvm::Expected<Schedule> parseSchedule(const std::string &text, Schedule schedule) {
  std::istringstream in(text);
  std::string item;
  while (in >> item) {
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      return makeError("'" + item + "' is not key=value");
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    const ScheduleField *field = findScheduleField(key);
    if (!field || !field->printed)
      return makeError("unknown schedule key '" + key + "'");
    long long v = 0;
    size_t used = 0;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (value.empty() || used != value.size())
      return makeError(key + "=" + value + ": not an integer");
    if (!field->inRange(v))
      return field->outOfRange(value);
    field->set(schedule, static_cast<int>(v));
  }
  return schedule;
}

int maxRegisterTileRows(int vectors, int registers) {
  return (registers - 1 - vectors) / std::max(1, vectors);
}

int vectorWidthFor(int64_t extent, int preferred) {
  int width = std::max(1, preferred);
  while (width > 1 && width > extent)
    width /= 2;
  return width;
}

bool attentionTransposeTiles(int keyBlock, int64_t headDim, int vectorWidth) {
  // The width the lowering gives the block's vectors.
  int width = vectorWidthFor(keyBlock, vectorWidth);
  return width > 1 && keyBlock > 0 && keyBlock % width == 0 && headDim % width == 0;
}

llvm::Error validSchedule(const KernelDesc &kernel, const TargetInfo &target,
                          const Schedule &schedule) {
  for (const ScheduleField &field : scheduleFields()) {
    const int value = field.get(schedule);
    if (!field.inRange(value))
      return field.outOfRange(std::to_string(value));
    if (field.check && field.readBy(kernel))
      if (llvm::Error error = field.check(kernel, target, schedule))
        return error;
  }
  return llvm::Error::success();
}

std::string scheduleKey(const KernelDesc &kernel, const TargetInfo &target) {
  return target.halideTarget + " " + kernel.name();
}

Schedule scheduleFor(const KernelDesc &kernel, const TargetInfo &target,
                     const ScheduleTable &table) {
  auto it = table.find(scheduleKey(kernel, target));
  return it == table.end() ? defaultSchedule(kernel, target) : it->second;
}

BufferShape GemmLayout::packedShape() const {
  BufferShape shape;
  if (bf16) {
    shape.extents = {2, panelWidth, kPairs, panels};
    shape.isBF16 = true;
  } else if (quantized()) {
    shape.extents = {4, panelWidth, quantRows(), panels};
    shape.isInt8 = true;
  } else {
    shape.extents = {panelWidth, K, panels};
  }
  return shape;
}

GemmLayout gemmLayout(const KernelDesc &kernel, const Schedule &schedule) {
  GemmLayout l;
  l.K = std::max<int64_t>(1, kernel.inWidth);
  l.N = std::max<int64_t>(1, kernel.width);
  // The width the lowering gives vectors along N. int8 accumulators keep the
  // schedule's full width even for a layer narrower than it: with 4 or 8
  // lanes, LLVM encodes the dot product as AVX-VNNI's VEX vpdpbusd, which
  // Zen 4 lacks (SIGILL; PERFORMANCE.md). q4 sums its blocks the same way.
  const bool dotProducts = kernel.quantized();
  int vw =
      dotProducts ? std::max(1, schedule.vectorWidth) : vectorWidthFor(l.N, schedule.vectorWidth);
  l.vectorWidth = vw;
  l.panelWidth = std::max(vw, schedule.tileCols / vw * vw);
  l.panels = (l.N + l.panelWidth - 1) / l.panelWidth;
  l.tileRows = std::max(1, schedule.tileRows);
  l.kBlock = schedule.kBlock > 0 && schedule.kBlock < l.K ? schedule.kBlock : l.K;
  l.kBlocks = (l.K + l.kBlock - 1) / l.kBlock;
  // Unrolling by a factor that does not divide the block would need a guard
  // inside the reduction loop, which costs more than the unroll gains.
  int u = std::max(1, schedule.unrollK);
  l.unrollK = l.kBlock % u == 0 && l.K % l.kBlock == 0 ? u : 1;
  if (kernel.precision == "bf16") {
    l.bf16 = true;
    l.kPairs = (l.K + 1) / 2;
    l.kBlock = l.K;
    l.kBlocks = 1;
    l.unrollK = l.kPairs % u == 0 ? u : 1;
  }
  if (kernel.precision == "q4") {
    l.q4 = true;
    l.q4Blocks = (l.K + 31) / 32;
    l.kQuads = 8 * l.q4Blocks;
    l.kBlock = l.K;
    l.kBlocks = 1;
    l.unrollK = 1;
  } else if (dotProducts) {
    l.int8 = true;
    l.kQuads = (l.K + 3) / 4;
    l.kBlock = l.K;
    l.kBlocks = 1;
    l.unrollK = l.kQuads % u == 0 ? u : 1;
  }
  return l;
}

} // namespace tmc
