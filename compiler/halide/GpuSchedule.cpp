//===- GpuSchedule.cpp - CUDA schedules for every kernel kind -------------===//
//
// With `--target cuda` the algorithms of Lower*.cpp stay as they are and get
// these schedules instead of the CPU ones (Schedule::gpu). Halide's CUDA
// backend turns every Func computed at the root into one kernel launch, its
// gpu_blocks loops into the grid and its gpu_threads loops into a block.
//
// - Row-wise kernels (embeddings, sums, activations, norms, rope, pooling,
//   sequence projection): threads along dimension 0 (the features), blocks
//   over the rest. A stage that reduces (a norm's mean and 1/std, the
//   attention's row max) is computed at the root as a kernel of its own;
//   pure stages are inlined into their consumers.
// - GEMM: GpuGemmSchedule.cpp.
// - Attention: the scores are a tiled kernel (gpuKeyTile keys by queryTile
//   queries per block) that stages its tile of keys, transposed, in shared
//   memory; the row max, the row sum and the weighted values reduce per query
//   (and per head-dimension lane) over the keys the mask lets through.
//
// Weight packing stays on the host (LowerPack.cpp's CPU schedule): it runs
// once at load, and the executor uploads the packed panels once.
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/GpuLoops.h"
#include "compiler/halide/Lowering.h"

#include <map>
#include <stdexcept>

using namespace Halide;

namespace tmc::halide {

void gpuThreads(Stage s, const std::vector<VarOrRVar> &vars) {
  if (gpuSchedulesOnHost()) {
    for (const VarOrRVar &v : vars)
      s.parallel(v);
  } else if (vars.size() == 1) {
    s.gpu_threads(vars[0]);
  } else if (vars.size() == 2) {
    s.gpu_threads(vars[0], vars[1]);
  } else {
    s.gpu_threads(vars[0], vars[1], vars[2]);
  }
}

void gpuBlocks(Stage s, const std::vector<VarOrRVar> &vars) {
  if (gpuSchedulesOnHost()) {
    for (const VarOrRVar &v : vars)
      s.parallel(v);
  } else if (vars.size() == 1) {
    s.gpu_blocks(vars[0]);
  } else if (vars.size() == 2) {
    s.gpu_blocks(vars[0], vars[1]);
  } else {
    s.gpu_blocks(vars[0], vars[1], vars[2]);
  }
}

/// Threads for a dimension of `extent` (<= 0: unknown): the smallest power of
/// two covering it, at most `limit`, at least a warp's 32 where it is known
/// to be larger (so that small extents do not launch idle threads).
int threadsFor(int64_t extent, int limit) {
  limit = std::max(1, std::min(limit, 1024));
  if (extent <= 0)
    return limit;
  int threads = 1;
  while (threads < extent && threads < limit)
    threads *= 2;
  return threads;
}

/// Dimension 0 split into threads, every other pure dimension (and the
/// dimension-0 tiles) a grid dimension; reduction loops stay inside the
/// thread, serial. More than three grid dimensions are fused into three.
void gpuTileStage(Stage stage, const std::vector<Var> &args, int threads) {
  Var blockVar(args[0].name() + "_block"), threadVar(args[0].name() + "_thread");
  stage.split(args[0], blockVar, threadVar, threads, TailStrategy::GuardWithIf);
  std::vector<VarOrRVar> blocks = {blockVar};
  for (size_t i = 1; i < args.size(); ++i)
    blocks.push_back(args[i]);
  while (blocks.size() > 3) {
    Var fused(blocks[blocks.size() - 2].name() + "_" + blocks.back().name());
    stage.fuse(blocks[blocks.size() - 2], blocks.back(), fused);
    blocks.pop_back();
    blocks.back() = fused;
  }
  gpuThreads(stage, {threadVar});
  gpuBlocks(stage, blocks);
}

/// Every stage (pure and updates) of `f` as its own grid.
void gpuTileFunc(Func f, int threads) {
  gpuTileStage(f, f.args(), threads);
  for (int u = 0; u < f.num_update_definitions(); ++u)
    gpuTileStage(f.update(u), f.args(), threads);
}

namespace {

/// A Func that must be computed once, not inlined into each consumer: it
/// has update definitions, or calls an inline reduction (sum(), maximum())
/// that would otherwise be recomputed at every point of the consumer.
bool needsRoot(const Func &f, const std::vector<Func> &stages) {
  if (f.num_update_definitions() > 0)
    return true;
  for (const auto &[name, callee] : Internal::find_direct_calls(f.function())) {
    bool staged = false;
    for (const Func &s : stages)
      staged = staged || s.name() == name;
    if (!staged && !callee.updates().empty())
      return true;
  }
  return false;
}

const Func *findStage(const LoweredKernel &kernel, const std::string &name) {
  for (const Func &f : kernel.stages)
    if (f.name() == name)
      return &f;
  return nullptr;
}

/// The attention's score kernel: tiles of keys x queries per block, the
/// tile's keys (transposed) staged in shared memory.
void scheduleScores(Func score, Func keysT, const Schedule &schedule) {
  Var j = score.args()[0], i = score.args()[1], h = score.args()[2];
  Var jo("jo"), ji("ji"), io("io"), ii("ii");
  const int keyTile = threadsFor(schedule.gpuKeyTile, 1024);
  const int queryTile = threadsFor(std::max(1, schedule.queryTile), 1024 / keyTile);
  for (int u = 0; u <= score.num_update_definitions(); ++u) {
    Stage s = u == 0 ? Stage(score) : Stage(score.update(u - 1));
    s.tile(j, i, jo, io, ji, ii, keyTile, queryTile, TailStrategy::GuardWithIf);
    gpuThreads(s, {ji, ii});
    gpuBlocks(s, {jo, io, h});
  }
  // keysT(j, d, h): the block's keyTile keys, all of head_dim, for one head.
  Var kj = keysT.args()[0], kd = keysT.args()[1], kdo("kdo"), kdi("kdi");
  keysT.compute_at(score, jo)
      .split(kd, kdo, kdi, std::max(1, 256 / keyTile), TailStrategy::GuardWithIf);
  gpuThreads(keysT, {kj, kdi});
}

void scheduleAttention(const KernelDesc &kernel, LoweredKernel &lowered,
                       const Schedule &schedule) {
  const int headThreads = threadsFor(kernel.headDim, schedule.gpuThreads);
  const int queryThreads = threadsFor(32, schedule.gpuThreads);
  const Func *score = findStage(lowered, "score");
  const Func *keysT = findStage(lowered, "keys_t");
  for (Func f : lowered.stages) {
    if (f.name() == lowered.output.name())
      continue;
    if (score && keysT && (f.name() == "score" || f.name() == "keys_t"))
      continue;
    if (!needsRoot(f, lowered.stages))
      continue; // inlined: the mask, the logits and the weights are recomputed, never stored
    f.compute_root();
    // Head-dimension lanes where dimension 0 is the head dimension (the
    // weighted values), queries where it is a query (row max, row sum).
    gpuTileFunc(f, f.args()[0].name() == "d" ? headThreads : queryThreads);
  }
  if (score && keysT) {
    Func s = *score;
    s.compute_root();
    scheduleScores(s, *keysT, schedule);
  }
  gpuTileFunc(lowered.output, headThreads);
}

} // namespace

void scheduleForGpu(const KernelDesc &kernel, LoweredKernel &lowered, const Schedule &schedule) {
  if (kernel.kind == KernelKind::attention)
    return scheduleAttention(kernel, lowered, schedule);
  // Threads along the output's dimension 0 (features, or head_dim for rope).
  std::vector<BufferShape> sig = kernelSignature(kernel);
  int64_t inner = sig.back().extents.empty() ? 0 : sig.back().extents[0];
  const int threads = threadsFor(inner, schedule.gpuThreads);
  for (Func f : lowered.stages) {
    if (f.name() == lowered.output.name() || !needsRoot(f, lowered.stages))
      continue;
    f.compute_root();
    gpuTileFunc(f, f.args().size() > 1 ? threads : threadsFor(32, schedule.gpuThreads));
  }
  gpuTileFunc(lowered.output, threads);
}

} // namespace tmc::halide
