//===- ScheduleFields.cpp - The fields of a Schedule, as one table --------===//

#include "compiler/ScheduleFields.h"

#include "compiler/Error.h"
#include "compiler/Target.h"

#include <algorithm>
#include <initializer_list>
#include <string>

namespace tmc {

namespace {

constexpr uint32_t bit(KernelKind kind) { return ScheduleField::kindBit(kind); }

constexpr uint32_t kAllKinds = ~uint32_t(0);
constexpr uint32_t kLinear = bit(KernelKind::linear);
constexpr uint32_t kAttention = bit(KernelKind::attention);
constexpr uint32_t kNorms = bit(KernelKind::norm) | bit(KernelKind::add_norm);
/// Everything but GEMMs and attention: kernels that compute row by row.
constexpr uint32_t kRowWise = kAllKinds & ~kLinear & ~kAttention;
/// Row-wise kernels that run one row per parallel task (not pooling or
/// linformer's projection, which mix rows).
constexpr uint32_t kRowTasks = kRowWise & ~bit(KernelKind::pool) & ~bit(KernelKind::seq_project);

bool rowWise(const KernelDesc &kernel) { return kRowWise & bit(kernel.kind); }

} // namespace

bool rowTasks(const KernelDesc &kernel) { return kRowTasks & bit(kernel.kind); }

namespace {

/// `base` with `member` set to each of `values` in turn.
template <typename T>
std::vector<Schedule> neighbours(const Schedule &base, T Schedule::*member,
                                 std::initializer_list<int> values) {
  std::vector<Schedule> out;
  for (int value : values) {
    Schedule s = base;
    s.*member = static_cast<T>(value);
    out.push_back(s);
  }
  return out;
}

/// Whether a K block of `kBlock` steps blocks the kernel's sum (0 or K and
/// more run it unblocked).
bool blocksK(const KernelDesc &kernel, int kBlock) { return kBlock > 0 && kBlock < kernel.inWidth; }

// Rules beyond the ranges (validSchedule).

llvm::Error checkVectorWidth(const KernelDesc &kernel, const TargetInfo &target,
                             const Schedule &s) {
  const int vw = s.vectorWidth;
  if ((vw & (vw - 1)) != 0 || vw > 2 * target.vectorWidth)
    return makeError("vector_width=" + std::to_string(vw) + " must be a power of two up to " +
                     std::to_string(2 * target.vectorWidth));
  // Narrower int32 accumulators make LLVM pick AVX-VNNI's VEX encoding of
  // vpdpbusd, an illegal instruction on CPUs with AVX512-VNNI only (Zen 4).
  const bool quantized = kernel.quantized();
  if (quantized && target.dotProducts && vw < target.vectorWidth)
    return makeError("vector_width=" + std::to_string(vw) + ": " + kernel.precision + " GEMMs on " +
                     target.name + " need " + std::to_string(target.vectorWidth) +
                     " lanes or more (narrower dot products would not run on AVX512-VNNI CPUs)");
  return llvm::Error::success();
}

llvm::Error checkTileCols(const KernelDesc &, const TargetInfo &, const Schedule &s) {
  const int vw = s.vectorWidth;
  if (s.tileCols < vw || s.tileCols % vw != 0 || s.tileCols > 16 * vw)
    return makeError("tile_cols=" + std::to_string(s.tileCols) + " must be a multiple of " +
                     "vector_width=" + std::to_string(vw) + " up to " + std::to_string(16 * vw));
  return llvm::Error::success();
}

llvm::Error checkKBlock(const KernelDesc &kernel, const TargetInfo &, const Schedule &s) {
  if (s.kBlock > 0 && s.kBlock < s.unrollK)
    return makeError("k_block=" + std::to_string(s.kBlock) + " must be 0 or at least unroll_k");
  if (kernel.precision != "f32" && blocksK(kernel, s.kBlock))
    return makeError("k_block=" + std::to_string(s.kBlock) + ": " + kernel.precision +
                     " GEMMs are not blocked (0, or at least K = " +
                     std::to_string(kernel.inWidth) + ")");
  return llvm::Error::success();
}

llvm::Error checkKeysAt(const KernelDesc &kernel, const TargetInfo &, const Schedule &s) {
  if (s.keysAt == 1 && !attentionTransposeTiles(s.keyBlock, kernel.headDim, s.vectorWidth))
    return makeError(
        "keys_at=1 (keys transposed per block) needs key_block=" + std::to_string(s.keyBlock) +
        " and head_dim=" + std::to_string(kernel.headDim) +
        " to be multiples of the block's vector width");
  return llvm::Error::success();
}

/// A database's schedule is for the kind of target it is used on (the
/// default schedule's gpu: the target's, or TMC_GPU_SCHEDULE_ON_HOST).
llvm::Error checkGpu(const KernelDesc &, const TargetInfo &target, const Schedule &s) {
  const bool gpuTarget = target.gpu || gpuSchedulesOnHost();
  if (s.gpu != gpuTarget)
    return makeError(std::string(s.gpu ? "gpu=1 (a GPU schedule)" : "gpu=0 (a CPU schedule)") +
                     " for the " + (gpuTarget ? "GPU" : "CPU") + " target " + target.name);
  return llvm::Error::success();
}

// The tuner's values and seeds.

std::vector<int> vectorWidths(const KernelDesc &kernel, const TargetInfo &target,
                              const Schedule &) {
  const int tw = target.vectorWidth, half = std::max(4, tw / 2);
  // A GEMM's register tile is counted in vectors of the target's width
  // (SearchSpace::valid): no wider ones.
  if (kernel.kind == KernelKind::linear)
    return {tw, half};
  return {half, tw, 2 * tw};
}

/// k_block 0 and k_block >= K both mean unblocked: spelt as the default
/// spells it when the default is unblocked, else 0.
int canonicalKBlock(const KernelDesc &kernel, const Schedule &s, const Schedule &base) {
  if (blocksK(kernel, s.kBlock))
    return s.kBlock;
  return blocksK(kernel, base.kBlock) ? 0 : base.kBlock;
}

/// Groups of one panel are no groups; where K is blocked or the row tiles
/// are parallel tasks (parallel_rows) the lowering takes no groups either.
int canonicalPanelGroup(const KernelDesc &kernel, const Schedule &s, const Schedule &) {
  return s.panelGroup <= 1 || blocksK(kernel, s.kBlock) || s.parallelRows ? 0 : s.panelGroup;
}

/// `base` with row tasks on, in the given order, or off. On, K is unblocked:
/// row tasks take effect only there.
Schedule withRowTasks(const Schedule &base, bool on, bool rowsOuter) {
  Schedule s = base;
  s.parallelRows = on;
  s.rowsOuter = on && rowsOuter;
  if (on)
    s.kBlock = 0;
  return s;
}

/// Rows outer is an order of row tasks: without them (or with K blocked)
/// the lowering has none to order.
int canonicalRowsOuter(const KernelDesc &kernel, const Schedule &s, const Schedule &) {
  return s.rowsOuter && s.parallelRows && !blocksK(kernel, s.kBlock) ? 1 : 0;
}

const ScheduleField kFields[] = {
    {.key = "vector_width",
     .intMember = &Schedule::vectorWidth,
     .min = 1,
     .max = 64,
     .kinds = kAllKinds,
     .target = FieldTarget::Both,
     .check = checkVectorWidth,
     .search = {.kinds = kAllKinds,
                .values = vectorWidths,
                // Row-wise kernels: twice the default's lanes. GEMMs and
                // attention seed their tiles instead.
                .seeds =
                    [](const KernelDesc &kernel, const Schedule &base) {
                      return rowWise(kernel)
                                 ? neighbours(base, &Schedule::vectorWidth, {2 * base.vectorWidth})
                                 : std::vector<Schedule>{};
                    }},
     .doc = "f32 lanes per vector op (GPU: of the host's pack kernels)"},
    {.key = "tile_cols",
     .intMember = &Schedule::tileCols,
     .min = 1,
     .max = 1024,
     .kinds = kLinear,
     .target = FieldTarget::Both,
     .inVectors = true,
     .check = checkTileCols,
     .search = {.kinds = kLinear,
                // Up to 6 vectors: wider tiles leave registers for too few rows.
                .values = [](const KernelDesc &, const TargetInfo &,
                             const Schedule &s) -> std::vector<int> {
                  std::vector<int> out;
                  for (int vectors = 1; vectors <= 6; ++vectors)
                    out.push_back(vectors * s.vectorWidth);
                  return out;
                },
                // Narrower by a vector and taller by 2 rows: about the same
                // accumulators in another shape.
                .seeds =
                    [](const KernelDesc &, const Schedule &base) {
                      Schedule s = base;
                      s.tileCols = base.tileCols - base.vectorWidth;
                      s.tileRows = base.tileRows + 2;
                      return std::vector<Schedule>{s};
                    }},
     .doc = "output features per register tile, a multiple of vector_width; the packed "
            "weight's panel width (GPU: features per block)"},
    {.key = "tile_rows",
     .intMember = &Schedule::tileRows,
     .min = 1,
     .max = 16,
     .kinds = kLinear,
     .search = {.kinds = kLinear,
                .values =
                    [](const KernelDesc &, const TargetInfo &, const Schedule &) {
                      return std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14};
                    },
                .seeds =
                    [](const KernelDesc &, const Schedule &base) {
                      return neighbours(
                          base, &Schedule::tileRows,
                          {std::max(1, base.tileRows - 1), base.tileRows + 1, base.tileRows + 2});
                    }},
     .doc = "GEMM: tokens per register tile"},
    {.key = "query_tile",
     .intMember = &Schedule::queryTile,
     .min = 1,
     .max = 1024,
     .kinds = kAttention,
     .target = FieldTarget::Both,
     .search = {
         .kinds = kAttention,
         .values = [](const KernelDesc &, const TargetInfo &,
                      const Schedule &) { return std::vector<int>{4, 8, 16, 24, 32, 48, 64}; },
         .seeds =
             [](const KernelDesc &, const Schedule &base) {
               return neighbours(base, &Schedule::queryTile, {8, 32, 64});
             }},
     .doc = "attention: queries per parallel task (GPU: per block of the score kernel)"},
    {.key = "key_block",
     .intMember = &Schedule::keyBlock,
     .min = 4,
     .max = 1024,
     .zeroMeans = "one pass",
     .kinds = kAttention,
     .search = {.kinds = kAttention,
                .values =
                    [](const KernelDesc &, const TargetInfo &, const Schedule &) {
                      return std::vector<int>{0, 16, 32, 64, 128};
                    },
                .seeds =
                    [](const KernelDesc &, const Schedule &base) {
                      return neighbours(base, &Schedule::keyBlock, {0, 32, 128});
                    }},
     .doc = "attention: keys per block of the online softmax; 0: one pass over all keys"},
    {.key = "parallel",
     .boolMember = &Schedule::parallel,
     .kinds = kAllKinds,
     .target = FieldTarget::Both,
     // GEMMs choose between parallel_rows and panels instead.
     .search = {.kinds = kAllKinds & ~kLinear,
                .seeds =
                    [](const KernelDesc &kernel, const Schedule &base) {
                      return rowWise(kernel)
                                 ? neighbours(base, &Schedule::parallel, {!base.parallel})
                                 : std::vector<Schedule>{};
                    }},
     .doc = "spread tiles over the thread pool (GPU: the host's pack kernels)"},
    {.key = "parallel_min_rows",
     .intMember = &Schedule::parallelMinRows,
     .min = 0,
     .max = 1 << 20,
     .kinds = kRowTasks,
     .search = {.kinds = kRowTasks,
                .values =
                    [](const KernelDesc &kernel, const TargetInfo &, const Schedule &) {
                      // Around the default, and 0 (any call in parallel).
                      const int d = std::max(1, defaultParallelMinRows(kernel));
                      std::vector<int> values = {0};
                      for (int v : {d / 4, d / 2, d, 2 * d, 4 * d})
                        if (v > values.back())
                          values.push_back(v);
                      return values;
                    },
                .seeds =
                    [](const KernelDesc &, const Schedule &base) {
                      return neighbours(base, &Schedule::parallelMinRows,
                                        {0, base.parallelMinRows / 2, base.parallelMinRows * 2});
                    }},
     .doc = "row-wise kernels: rows in parallel only in a call of at least this many (0: any)"},
    {.key = "k_block",
     .intMember = &Schedule::kBlock,
     .min = 0,
     .max = 1 << 20,
     .kinds = kLinear,
     .check = checkKBlock,
     .search = {.kinds = kLinear,
                .values =
                    [](const KernelDesc &, const TargetInfo &, const Schedule &) {
                      return std::vector<int>{0, 64, 96, 128, 192, 256, 384, 512, 768, 1024};
                    },
                .seeds =
                    [](const KernelDesc &, const Schedule &base) {
                      return neighbours(base, &Schedule::kBlock, {0, 256, 512});
                    },
                .canonical = canonicalKBlock},
     .doc = "GEMM: reduction steps per cache block; 0 or >= K: no blocking (GPU: 0)"},
    {.key = "unroll_k",
     .intMember = &Schedule::unrollK,
     .min = 1,
     .max = 16,
     .kinds = kLinear,
     .search = {
         .kinds = kLinear,
         .values =
             [](const KernelDesc &, const TargetInfo &, const Schedule &) {
               return std::vector<int>{1, 2, 4};
             },
         .seeds = [](const KernelDesc &,
                     const Schedule &base) { return neighbours(base, &Schedule::unrollK, {2}); }},
     .doc = "GEMM: reduction steps unrolled inside the register tile"},
    {.key = "parallel_rows",
     .boolMember = &Schedule::parallelRows,
     .kinds = kLinear,
     .search = {.kinds = kLinear,
                .seeds =
                    [](const KernelDesc &, const Schedule &base) {
                      return std::vector<Schedule>{
                          withRowTasks(base, !base.parallelRows, base.rowsOuter)};
                    }},
     .doc = "GEMM: parallel over (panel, row tile) pairs, not panels alone (unblocked K only)"},
    {.key = "rows_outer",
     .boolMember = &Schedule::rowsOuter,
     .kinds = kLinear,
     .search = {.kinds = kLinear,
                .seeds =
                    [](const KernelDesc &, const Schedule &base) {
                      return std::vector<Schedule>{
                          withRowTasks(base, true, !(base.parallelRows && base.rowsOuter))};
                    },
                .canonical = canonicalRowsOuter},
     .doc = "GEMM with parallel_rows: the (panel, row tile) tasks row by row (each thread first "
            "takes a contiguous share of the rows, all panels, the rows its row-wise kernels "
            "touch) instead of panel by panel"},
    {.key = "pack_tokens",
     .boolMember = &Schedule::packTokens,
     .kinds = kLinear,
     .search = {.kinds = kLinear,
                .seeds =
                    [](const KernelDesc &, const Schedule &base) {
                      Schedule s = base;
                      s.packTokens = !base.packTokens;
                      return std::vector<Schedule>{s};
                    }},
     .doc = "f32 GEMM: each row tile's tokens packed k-major once per call (T > 1), so that a "
            "k step's broadcasts load from one pointer"},
    {.key = "token_block",
     .intMember = &Schedule::tokenBlock,
     .min = 1,
     .max = 1 << 20,
     .zeroMeans = "one block",
     .kinds = kLinear,
     // Not searched: the tuner measures a GEMM at its tokens estimate (128),
     // one block under any value; the default sizes it (Schedule.cpp).
     .doc = "GEMM: token rows per block of a long run (8 blocks or more: the blocks are the "
            "parallel tasks), each block through every panel before the next (rounded down to "
            "whole row tiles; 0: one block of all rows)"},
    {.key = "panel_group",
     .intMember = &Schedule::panelGroup,
     .min = 1,
     .max = 1024,
     .zeroMeans = "no groups",
     .kinds = kLinear,
     .search = {.kinds = kLinear,
                .values = [](const KernelDesc &, const TargetInfo &,
                             const Schedule &) { return std::vector<int>{0, 2, 4, 8, 16, 32}; },
                .seeds =
                    [](const KernelDesc &, const Schedule &base) {
                      return base.panelGroup > 1
                                 ? neighbours(base, &Schedule::panelGroup,
                                              {0, base.panelGroup / 2, base.panelGroup * 2})
                                 : neighbours(base, &Schedule::panelGroup, {8});
                    },
                .canonical = canonicalPanelGroup},
     .doc = "GEMM: each row tile through this many consecutive panels before the next row tile "
            "(the groups are the parallel tasks; 0 or 1: none; ignored where K is blocked or "
            "with parallel_rows)"},
    {.key = "decode_variant",
     .boolMember = &Schedule::decodeVariant,
     .kinds = kLinear,
     .target = FieldTarget::Both,
     .doc = "GEMM: T == 1 takes a one-row tile (GPU: the GEMV kernel); set by the kernel"},
    {.key = "tokens_estimate",
     .intMember = &Schedule::tokensEstimate,
     .min = 1,
     .max = 1 << 20,
     .kinds = kLinear,
     .target = FieldTarget::Both,
     .doc = "GEMM: T for Halide's estimates (autoschedulers, not code generation)"},
    {.key = "keys_at",
     .intMember = &Schedule::keysAt,
     .min = 0,
     .max = 1,
     .kinds = kAttention,
     .check = checkKeysAt,
     .search = {.kinds = kAttention,
                .seeds =
                    [](const KernelDesc &, const Schedule &base) {
                      return neighbours(base, &Schedule::keysAt, {1 - base.keysAt});
                    },
                // It places a stage of the key-blocked form only.
                .canonical =
                    [](const KernelDesc &, const Schedule &s, const Schedule &base) {
                      return s.keyBlock == 0 ? base.keysAt : s.keysAt;
                    }},
     .doc = "attention with key blocks: keys transposed once per call, for every head (0), or "
            "per query tile and key block (1)"},
    {.key = "stage_rows",
     .boolMember = &Schedule::stageRows,
     .kinds = kNorms,
     .search = {.kinds = kNorms,
                .seeds =
                    [](const KernelDesc &, const Schedule &base) {
                      return neighbours(base, &Schedule::stageRows, {!base.stageRows});
                    }},
     .doc = "norms: the sum and the centered row stored per token (1) or recomputed in each "
            "pass (0)"},
    {.key = "algorithm_only",
     .boolMember = &Schedule::algorithmOnly,
     .kinds = kLinear,
     .printed = false,
     .doc = "GEMM: the algorithm and its estimates only, for Halide's autoschedulers; set "
            "by the tuner in its own process, never stored"},
    {.key = "gpu",
     .boolMember = &Schedule::gpu,
     .kinds = kAllKinds,
     .target = FieldTarget::Gpu,
     .check = checkGpu,
     .doc = "a GPU schedule; set by the target"},
    {.key = "gpu_threads",
     .intMember = &Schedule::gpuThreads,
     .min = 1,
     .max = 1024,
     .kinds = kAllKinds,
     .target = FieldTarget::Gpu,
     .doc = "threads per block of row-wise kernels (a CUDA block has at most 1024)"},
    {.key = "gpu_tile_rows",
     .intMember = &Schedule::gpuTileRows,
     .min = 1,
     .max = 1024,
     .kinds = kLinear,
     .target = FieldTarget::Gpu,
     .doc = "GEMM: token rows per block"},
    {.key = "gpu_rows_per_thread",
     .intMember = &Schedule::gpuRowsPerThread,
     .min = 1,
     .max = 64,
     .kinds = kLinear,
     .target = FieldTarget::Gpu,
     .doc = "GEMM: rows each thread accumulates, unrolled"},
    {.key = "gpu_k_chunk",
     .intMember = &Schedule::gpuKChunk,
     .min = 1,
     .max = 1024,
     .kinds = kLinear,
     .target = FieldTarget::Gpu,
     .doc = "GEMM: reduction steps staged in shared memory at once"},
    {.key = "gpu_key_tile",
     .intMember = &Schedule::gpuKeyTile,
     .min = 1,
     .max = 1024,
     .kinds = kAttention,
     .target = FieldTarget::Gpu,
     .doc = "attention: keys per block of the score kernel (at most 1024 threads)"},
};

} // namespace

llvm::Error ScheduleField::outOfRange(llvm::StringRef written) const {
  std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (zeroMeans)
    return makeError(llvm::Twine(key) + "=" + written + " must be 0 (" + zeroMeans + ") or in " +
                     range);
  return makeError(llvm::Twine(key) + "=" + written + " is out of range " + range);
}

llvm::ArrayRef<ScheduleField> scheduleFields() { return kFields; }

const ScheduleField *findScheduleField(llvm::StringRef key) {
  for (const ScheduleField &field : kFields)
    if (key == field.key)
      return &field;
  return nullptr;
}

} // namespace tmc
