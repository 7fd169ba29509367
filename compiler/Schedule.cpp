//===- Schedule.cpp - Default schedules and the GEMM layout ---------------===//

#include "compiler/Schedule.h"

#include "compiler/KernelPlan.h"
#include "compiler/Target.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace tmc {

std::string Schedule::str() const {
  std::ostringstream os;
  os << "vector_width=" << vectorWidth << " tile_cols=" << tileCols
     << " tile_rows=" << tileRows << " query_tile=" << queryTile
     << " key_block=" << keyBlock
     << " parallel=" << (parallel ? 1 : 0) << " k_block=" << kBlock << " unroll_k=" << unrollK
     << " parallel_rows=" << (parallelRows ? 1 : 0) << " decode_variant=" << (decodeVariant ? 1 : 0)
     << " tokens_estimate=" << tokensEstimate << " keys_at=" << keysAt
     << " stage_rows=" << (stageRows ? 1 : 0);
  if (gpu)
    os << " gpu=1 gpu_threads=" << gpuThreads << " gpu_tile_rows=" << gpuTileRows
       << " gpu_rows_per_thread=" << gpuRowsPerThread << " gpu_k_chunk=" << gpuKChunk
       << " gpu_key_tile=" << gpuKeyTile;
  return os.str();
}

bool gpuSchedulesOnHost() {
  static const bool onHost = [] {
    const char *flag = std::getenv("TMC_GPU_SCHEDULE_ON_HOST");
    return flag && flag[0] == '1';
  }();
  return onHost;
}

namespace {

/// GPU blocks: a GEMM block is one 64-feature panel by 16 tokens, 256
/// threads of 4 rows each (the decode GEMV: one row, a thread per feature),
/// staging 16-step slabs of tokens and weights in shared memory; row-wise
/// kernels take 256 threads along the features.
Schedule defaultGpuSchedule(const KernelDesc &kernel, const TargetInfo &target) {
  Schedule s;
  s.gpu = true;
  s.vectorWidth = target.vectorWidth; // the host-side pack kernels' vectors
  int64_t roundedWidth = (kernel.width + s.vectorWidth - 1) / s.vectorWidth * s.vectorWidth;
  s.tileCols = static_cast<int>(std::min<int64_t>(64, std::max<int64_t>(8, roundedWidth)));
  s.tileRows = 4;
  s.kBlock = 0; // the GPU GEMM stages K in gpuKChunk slabs instead
  s.unrollK = 1;
  s.queryTile = 8;
  s.parallel = true;
  return s;
}

} // namespace

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
  if (kernel.kind == KernelKind::Linear) {
    // Blocking K keeps a block of the weight panel in cache while every row
    // tile of the tokens passes over it, at the price of storing partial sums
    // per block. Measured on the GPT-2/BERT shapes (bench/kernels/README.md):
    // for K <= 1024, blocks of 128 (AVX-512's 4 x 6 tile: a 32 KiB panel
    // block, L1) or 384 (AVX2) win 3-6%; for K = 3072, AVX-512 runs fastest unblocked and
    // AVX2 with blocks of 256. NEON (not measured on hardware: this machine
    // only emulates it): blocks of 256 keep a 16 KiB panel block in even a
    // 32 KiB L1.
    const bool longK = kernel.inWidth > 1024;
    if (neon)
      s.kBlock = 256;
    else if (avx512)
      s.kBlock = longK ? 0 : 128;
    else
      s.kBlock = longK ? 256 : 384;
    s.unrollK = 1;
    // AVX-512 GEMMs: 3 vectors x 8 rows (24 zmm accumulators again), K
    // unblocked. It beat 4 x 6 with K blocks of 128 by 3-8% on every GPT-2
    // shape of K 768 on an AMD Zen 4 (bench/kernels, 2026-11-25), and `tmc
    // tune` picked 48 x 8 for three of GPT-2's GEMMs on the Intel machine too
    // (bench/results/tune/run2-p10); 8 rows also divide the usual prompt
    // lengths, where 6 computes 4 clamped rows of 132 at T = 128. Widths that
    // 64 divides and 48 does not (256, 512, 1024: 5% padding in panels of 48)
    // keep the 4 x 6 tile.
    if (avx512 && !(kernel.width % 64 == 0 && kernel.width % 48 != 0)) {
      s.tileCols = 3 * s.vectorWidth;
      s.tileRows = 8;
      s.kBlock = 0;
    }
    // Narrow layers: a tile wider than the layer only computes padding.
    int64_t roundedWidth = (kernel.width + s.vectorWidth - 1) / s.vectorWidth * s.vectorWidth;
    s.tileCols = static_cast<int>(std::min<int64_t>(s.tileCols, roundedWidth));
  }
  // Attention: the online softmax over blocks of 64 keys beat the one-pass
  // form at every length measured (GPT-2 small heads, causal, AVX-512,
  // bench/kernels, one thread: 0.45 vs 0.99 ms at T = 128, 5.1 vs 17.3 ms at
  // T = 512; AVX2 likewise); blocks of 32 or 128 were slower, query tiles of
  // 32 were 1-3% faster than 16 or 64. keyBlock = 0 selects the one-pass form.
  s.queryTile = 32;
  s.keyBlock = 64;
  s.parallel = true;
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

std::string decodeKernelSuffix(const KernelDesc &kernel, const Schedule &schedule) {
  if (kernel.kind == KernelKind::Linear && schedule.gpu && schedule.decodeVariant)
    return "_gemv";
  // From the kernel, not the schedule: a database's schedule may say
  // otherwise for one ISA of a multi-ISA target, and the executor and the
  // kernels it links must agree on which kernels exist.
  if (kernel.kind == KernelKind::Attention && !schedule.gpu && kernel.decodeVariant)
    return "_decode";
  return "";
}

Schedule decodeKernelSchedule(const KernelDesc &kernel, const Schedule &schedule) {
  return kernel.kind == KernelKind::Linear ? gemvSchedule(schedule)
                                           : decodeAttentionSchedule(schedule);
}

bool parseSchedule(const std::string &text, Schedule *schedule, std::string *error) {
  struct Field {
    const char *key;
    int *intValue;
    bool *boolValue;
    int lo, hi;
  };
  Schedule s = *schedule;
  const Field fields[] = {
      {"vector_width", &s.vectorWidth, nullptr, 1, 64},
      {"tile_cols", &s.tileCols, nullptr, 1, 1024},
      {"tile_rows", &s.tileRows, nullptr, 1, 64},
      {"query_tile", &s.queryTile, nullptr, 1, 4096},
      {"key_block", &s.keyBlock, nullptr, 0, 4096},
      {"parallel", nullptr, &s.parallel, 0, 1},
      {"k_block", &s.kBlock, nullptr, 0, 1 << 20},
      {"unroll_k", &s.unrollK, nullptr, 1, 64},
      {"parallel_rows", nullptr, &s.parallelRows, 0, 1},
      {"decode_variant", nullptr, &s.decodeVariant, 0, 1},
      {"tokens_estimate", &s.tokensEstimate, nullptr, 1, 1 << 20},
      {"keys_at", &s.keysAt, nullptr, 0, 1},
      {"stage_rows", nullptr, &s.stageRows, 0, 1},
  };
  std::istringstream in(text);
  std::string item;
  while (in >> item) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      *error = "'" + item + "' is not key=value";
      return false;
    }
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    const Field *field = nullptr;
    for (const Field &f : fields)
      if (key == f.key)
        field = &f;
    if (!field) {
      *error = "unknown schedule key '" + key + "'";
      return false;
    }
    long long v = 0;
    size_t used = 0;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (value.empty() || used != value.size()) {
      *error = key + "=" + value + ": not an integer";
      return false;
    }
    if (v < field->lo || v > field->hi) {
      *error = key + "=" + value + " is out of range [" + std::to_string(field->lo) + ", " +
               std::to_string(field->hi) + "]";
      return false;
    }
    if (field->intValue)
      *field->intValue = static_cast<int>(v);
    else
      *field->boolValue = v != 0;
  }
  *schedule = s;
  return true;
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

bool validSchedule(const KernelDesc &kernel, const TargetInfo &target, const Schedule &s,
                   std::string *error) {
  auto fail = [&](const std::string &why) {
    *error = why;
    return false;
  };
  const int vw = s.vectorWidth;
  if (vw < 1 || (vw & (vw - 1)) != 0 || vw > 2 * target.vectorWidth)
    return fail("vector_width=" + std::to_string(vw) + " must be a power of two up to " +
                std::to_string(2 * target.vectorWidth));
  if (s.tileRows < 1 || s.tileRows > 16)
    return fail("tile_rows=" + std::to_string(s.tileRows) + " is out of range [1, 16]");
  if (s.queryTile < 1 || s.queryTile > 1024)
    return fail("query_tile=" + std::to_string(s.queryTile) + " is out of range [1, 1024]");
  if (s.keyBlock != 0 && (s.keyBlock < 4 || s.keyBlock > 1024))
    return fail("key_block=" + std::to_string(s.keyBlock) + " must be 0 (one pass) or in [4, 1024]");
  if (s.keysAt < 0 || s.keysAt > 1)
    return fail("keys_at=" + std::to_string(s.keysAt) + " must be 0 (per head) or 1 (per block)");
  if (kernel.kind == KernelKind::Attention && s.keysAt == 1 &&
      !attentionTransposeTiles(s.keyBlock, kernel.headDim, vw))
    return fail("keys_at=1 (keys transposed per block) needs key_block=" +
                std::to_string(s.keyBlock) + " and head_dim=" + std::to_string(kernel.headDim) +
                " to be multiples of the block's vector width");
  if (kernel.kind == KernelKind::Linear) {
    if (s.tileCols < vw || s.tileCols % vw != 0 || s.tileCols > 16 * vw)
      return fail("tile_cols=" + std::to_string(s.tileCols) + " must be a multiple of " +
                  "vector_width=" + std::to_string(vw) + " up to " + std::to_string(16 * vw));
    if (s.kBlock < 0 || (s.kBlock > 0 && s.kBlock < s.unrollK))
      return fail("k_block=" + std::to_string(s.kBlock) + " must be 0 or at least unroll_k");
    if (s.unrollK < 1 || s.unrollK > 16)
      return fail("unroll_k=" + std::to_string(s.unrollK) + " is out of range [1, 16]");
  }
  return true;
}

std::string scheduleKey(const KernelDesc &kernel, const TargetInfo &target) {
  return target.halideTarget + " " + kernel.name();
}

Schedule scheduleFor(const KernelDesc &kernel, const TargetInfo &target,
                     const ScheduleTable &table) {
  auto it = table.find(scheduleKey(kernel, target));
  return it == table.end() ? defaultSchedule(kernel, target) : it->second;
}

GemmLayout gemmLayout(const KernelDesc &kernel, const Schedule &schedule) {
  GemmLayout l;
  l.K = std::max<int64_t>(1, kernel.inWidth);
  l.N = std::max<int64_t>(1, kernel.width);
  // The width the lowering gives vectors along N.
  int vw = vectorWidthFor(l.N, schedule.vectorWidth);
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
  return l;
}

} // namespace tmc
