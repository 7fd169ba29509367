//===- Schedule.h - Kernel schedules as plain data --------------*- C++ -*-===//
//
// A schedule is a small struct, kept apart from the algorithms in
// compiler/halide/Lower*.cpp, so that the heuristic below, the tuner and the
// tuning database all speak the same language. Lowering reads it and never
// decides tiling on its own.
//
// This header is Halide-free on purpose: the executor generator needs the
// packed weight layout of a linear kernel (`gemmLayout`) without compiling
// Halide.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelDesc.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>

namespace tmc {

struct TargetInfo;

struct Schedule {
  int vectorWidth = 16; ///< f32 lanes per vector op
  int tileCols = 64;    ///< output features per register tile (multiple of vectorWidth);
                        ///< for a linear kernel also the packed weight's panel width
  int tileRows = 4;     ///< tokens per register tile
  int queryTile = 16;   ///< attention: queries per parallel task
  int keyBlock = 0;     ///< attention: keys per block of the online softmax;
                        ///< 0: one pass, the scores of a query tile against all its keys
  bool parallel = true; ///< spread tiles over the thread pool
  /// Row-wise kernels (embeddings, sums, activations, norms, rope): rows run
  /// in parallel only in a call of at least this many rows (0: any call).
  /// Waking the pool costs more than a few short rows take alone.
  int parallelMinRows = 0;

  // Linear (GEMM) only.
  int kBlock = 0;       ///< reduction steps per cache block; 0 or >= K: no blocking
  int unrollK = 1;      ///< reduction steps unrolled inside the register tile
  bool parallelRows = false;  ///< parallel over (panel, row tile) pairs, not panels alone
                              ///< (ignored when K is blocked)
  /// With parallelRows: the tasks in row-major order, so that each thread's
  /// share of them (runtime/thread_pool.cpp) is a share of the token rows
  /// (all panels), rather than of the panels (all rows).
  bool rowsOuter = false;
  bool decodeVariant = true;  ///< T == 1 takes a one-row tile instead of tileRows rows
  /// f32: each row tile's tokens packed k-major once per call (T > 1), so
  /// that a k step's broadcasts load from one pointer at fixed offsets.
  bool packTokens = true;
  /// Long runs: the token rows in blocks of about this many (whole row
  /// tiles), each block through every panel before the next, so that a
  /// block's tokens stay in cache while the panels pass over them, rather
  /// than all T rows streaming from memory once per panel. 0: one block.
  int tokenBlock = 0;
  /// Each row tile through this many consecutive panels before the next row
  /// tile (within a token block), instead of each panel through every row
  /// tile: a tile's output rows are written as runs of panelGroup panels,
  /// and the group's panels are read from cache once per row tile. The
  /// groups are the parallel tasks. 0 or 1: no groups. Ignored where K is
  /// blocked or with parallelRows.
  int panelGroup = 0;
  int tokensEstimate = 128;   ///< T for Halide's estimates (autoschedulers, not codegen)

  // Where intermediate stages are computed (compute_at and fusion choices).
  /// Attention with key blocks: where the keys are transposed for the scores.
  /// 0: once per head, into a buffer of all its keys that every query tile
  /// reads; 1: per query tile and key block it visits, just before the
  /// block's scores (more transposes, but no head-sized buffer to stream
  /// from cache: for long sequences).
  int keysAt = 0;
  /// LayerNorm/RMSNorm: the (residual) sum and the centered row are stored
  /// per token and read by the next pass (true), or fused into each pass
  /// that reads them and recomputed there (false).
  bool stageRows = true;
  /// Lowering defines the algorithm and its estimates only, no schedule (for
  /// Halide's autoschedulers; linear kernels). Not part of str().
  bool algorithmOnly = false;

  // GPU (--target cuda) only: loops map to CUDA blocks and threads
  // (compiler/halide/GpuSchedule.cpp). A GEMM block computes tileCols
  // features (one packed panel) by gpuTileRows tokens; queryTile is the
  // attention's queries per block.
  bool gpu = false;          ///< schedule for the GPU (set by the target, not tuned)
  int gpuThreads = 256;      ///< threads per block of row-wise kernels
  int gpuTileRows = 16;      ///< GEMM: token rows per block
  int gpuRowsPerThread = 4;  ///< GEMM: rows each thread accumulates (unrolled)
  int gpuKChunk = 16;        ///< GEMM: reduction steps staged in shared memory at once
  int gpuKeyTile = 32;       ///< attention: keys per block of the score kernel

  /// One line, `key=value` pairs in the order of the field table
  /// (ScheduleFields.h), as shown by --emit=halide and stored by the tuner;
  /// gpu=1 and the gpu_* keys appear only in GPU schedules.
  std::string str() const;
  /// Every field of the table (ScheduleFields.h), printed in str() or not
  /// (algorithm_only, the GPU's in a CPU schedule): with
  /// KernelDesc::fingerprint, what a compile job is keyed on before lowering.
  std::string fingerprint() const;

  bool operator==(const Schedule &) const = default;
};

/// TMC_GPU_SCHEDULE_ON_HOST=1 (tests only): CPU targets get the GPU schedules,
/// blocks and threads becoming parallel host loops (GpuSchedule.cpp), so that
/// their numerics are checked on machines without a GPU.
bool gpuSchedulesOnHost();

/// The default Schedule::parallelMinRows of `kernel`: rows of 2^14 values
/// (row-wise kernels; 0 for the rest).
int defaultParallelMinRows(const KernelDesc &kernel);

/// Parses `Schedule::str()`'s form onto `defaults` (a key left out keeps its
/// value there). Every key str() prints is accepted, with the range of its
/// field (ScheduleFields.h). An error naming the key on an unknown key, a
/// missing `=`, a value that is not an integer, or one out of its range.
llvm::Expected<Schedule> parseSchedule(const std::string &text, Schedule defaults);

/// Success if `schedule` can compile `kernel` for `target`: every field in
/// its range (as parseSchedule checks it), and the rules of the fields the
/// kernel reads (vector width a power of two up to twice the target's,
/// tile_cols a multiple of it, ...); else an error naming the field.
llvm::Error validSchedule(const KernelDesc &kernel, const TargetInfo &target,
                          const Schedule &schedule);

/// The largest vector width <= `preferred` (halving it) that `extent`
/// admits: what the lowerings give a loop of `extent` (compiler/halide), and
/// what the GEMM layout and the schedule checks here derive from them.
int vectorWidthFor(int64_t extent, int preferred);

/// The most rows a GEMM register tile of `vectors` accumulator vectors per
/// row may have: its accumulators, one row of weight vectors and the
/// broadcast token value within `registers` vector registers (a tile past
/// them spills). The default schedules and `tmc tune`'s candidates obey it.
int maxRegisterTileRows(int vectors, int registers);

/// Whether the key-blocked attention transposes its keys in square tiles of
/// the vector width its key blocks get (key_block and head_dim both multiples
/// of it), rather than gathering them; keys_at=1 requires it.
bool attentionTransposeTiles(int keyBlock, int64_t headDim, int vectorWidth);

/// Schedules chosen by a tuning database (`tmc compile --tuning-db`), by
/// `scheduleKey`: a multi-ISA target's variants each have their own.
using ScheduleTable = std::map<std::string, Schedule>;

/// "HALIDE_TARGET KERNEL_NAME", for a concrete target.
std::string scheduleKey(const KernelDesc &kernel, const TargetInfo &target);

/// `table`'s schedule for `kernel` on the concrete `target`, else
/// `defaultSchedule`: the rule resolveSchedules (KernelPlan.h) applies to
/// every kernel of a plan, once.
Schedule scheduleFor(const KernelDesc &kernel, const TargetInfo &target,
                     const ScheduleTable &table);

/// What tmc picks without a tuning database: register tiles sized to the
/// target's vector registers (16 lanes on AVX-512, 8 on AVX2, 4 on NEON).
Schedule defaultSchedule(const KernelDesc &kernel, const TargetInfo &target);

/// The GPU GEMM's decoding variant (T == 1), compiled as a kernel of its own
/// (`tmk_<kernel>_gemv`, called by the executor for one-token runs): one token
/// row per block. Its packed weight layout is the GEMM's.
Schedule gemvSchedule(const Schedule &gemm);

/// The suffix of `kernel`'s decoding-step variant, a kernel of its own that
/// the executor calls when T == 1 ("" when it has none): "_gemv" for a GPU
/// GEMM (gemvSchedule); "_decode" for a CPU attention that a decoding step
/// calls (decodeAttentionSchedule).
std::string decodeKernelSuffix(const KernelDesc &kernel, const Schedule &schedule);

/// The variant's schedule (decodeKernelSuffix says which kernels have one).
Schedule decodeKernelSchedule(const KernelDesc &kernel, const Schedule &schedule);

/// One query against the cache: the one-pass form (key_block=0) with a tile
/// of one query, whose scores are dot products along head_dim over the keys
/// as stored (LowerAttention.cpp), rather than products over keys
/// transposed first: for a single query the transpose costs as much as the
/// products.
Schedule decodeAttentionSchedule(const Schedule &attention);

/// The decoding step's variant for a batched step (`_decode_rows`), whose
/// sequences the executor runs in parallel, one task each: the decoding
/// variant without parallel loops, which reads each key and value row once
/// for all heads (the rows in full, one after the other) rather than once
/// per head (LowerAttention.cpp).
Schedule decodeRowsAttentionSchedule(const Schedule &attention);

/// "_decode_rows" for a kernel whose decoding variant is "_decode", else "".
std::string decodeRowsKernelSuffix(const KernelDesc &kernel, const Schedule &schedule);

/// The layout a linear kernel's GEMM works in, derived from its shape and
/// schedule alone (so that the packing kernel, the GEMM kernel and the executor
/// generator agree). See compiler/halide/LowerPack.cpp for the contract.
struct GemmLayout {
  int64_t K = 0, N = 0;  ///< reduction length, output features
  int vectorWidth = 0;   ///< lanes actually used (<= schedule.vectorWidth, <= N rounded)
  int panelWidth = 0;    ///< P: output features per packed panel = register tile width
  int64_t panels = 0;    ///< ceil(N / P)
  int tileRows = 0;      ///< tokens per register tile
  int64_t kBlock = 0;    ///< reduction steps per block (== K when unblocked)
  int64_t kBlocks = 0;   ///< ceil(K / kBlock)
  int unrollK = 1;       ///< reduction unroll (divides kBlock; bf16: kPairs)
  /// bf16 precision: the weight is packed as pairs of bf16 along K (K rounded
  /// up to even with a zero), multiplied by `vdpbf16ps` where the CPU has
  /// AVX512-BF16; never blocked (kBlock == K).
  bool bf16 = false;
  int64_t kPairs = 0;    ///< bf16: ceil(K / 2)
  /// int8 precision: the weight is quantized per output channel and packed as
  /// quads of int8 along K (K rounded up to a multiple of 4 with zeros), then
  /// two more quad rows per panel: each channel's f32 scale and its int32
  /// zero-point correction, as bytes (LowerPack.cpp). The GEMM quantizes each
  /// token row to u8 and sums u8 x s8 products in int32 (`vpdpbusd` where
  /// the CPU has AVX512-VNNI); never blocked (kBlock == K).
  bool int8 = false;
  int64_t kQuads = 0; ///< int8: ceil(K / 4); q4: 8 * q4Blocks (K padded to blocks)
  /// q4 precision: the weight is quantized as ggml's Q4_0 (blocks of 32
  /// along K, an f16 scale each) and packed as 4-bit values in int8 quad rows:
  /// per pair of blocks, four rows of two quads (low and high nibble) for
  /// each block, then one row of the two blocks' f16 scales (LowerPack.cpp).
  /// The GEMM quantizes each token row to s8 like int8, sums each block's
  /// u4 x s8 products in int32 and the blocks in f32; never blocked.
  bool q4 = false;
  int64_t q4Blocks = 0; ///< q4: ceil(K / 32)
  /// int8 or q4: the weight packed in int8 rows of quads, the tokens
  /// quantized per row inside the GEMM.
  bool quantized() const { return int8 || q4; }
  /// An int8 or q4 weight's packed rows of 4 bytes per channel:
  /// int8 ceil(K/4) + 2, q4 9 * ceil(ceil(K/32) / 2).
  int64_t quantRows() const { return int8 ? kQuads + 2 : q4 ? 9 * ((q4Blocks + 1) / 2) : 0; }
  /// The packed weight's size in 4-byte words (f32 elements, bf16 pairs,
  /// int8 quads or q4 rows).
  int64_t packedWords() const {
    return int64_t(panelWidth) * (bf16 ? kPairs : quantized() ? quantRows() : K) * panels;
  }
  /// The packed weight as a buffer (halide/LowerPack.cpp's contract): f32
  /// {P, K, panels}; bf16 {2, P, ceil(K/2), panels}; int8 and q4 bytes
  /// {4, P, quantRows(), panels}.
  BufferShape packedShape() const;
};

/// The layout of `kernel` (a Linear kernel) under `schedule`.
GemmLayout gemmLayout(const KernelDesc &kernel, const Schedule &schedule);

} // namespace tmc
