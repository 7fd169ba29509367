//===- GpuGemmSchedule.cpp - CUDA schedules of the GEMM -------------------===//
//
// A block computes one packed panel (tileCols features) by gpuTileRows
// tokens, each thread gpuRowsPerThread rows of the block's accumulator tile
// (in shared memory: as a Register allocation Halide 14 gives every thread a
// private copy of the whole tile, 4 KiB of local memory per thread, since it
// cannot slice it through the output's n % P indexing). Decoding steps
// (T == 1) call the GEMV variant, a kernel of its own (gemvSchedule): one
// token row per block, a thread per feature.
//
// f32: the reduction walks K in slabs of gpuKChunk steps, staging the slab's
// tokens and weight panel in shared memory (compute_at the block's slab
// loop).
//
// bf16, int8, q4: the tokens are rounded (bf16 pairs) or quantized (u8 or
// s8 quads, after a kernel that finds each row's absolute maximum) once per
// call by kernels of their own, a thread per pair or quad; the GEMM's
// threads then read them and the packed weight straight from global memory
// (a warp's 32 features are 128 contiguous bytes of a quad row). A quad of
// int8 products is one vector reduction, which Halide's PTX backend emits
// as dp4a; q4 sums each block's 8 quads into a per-thread int32 sum, scaled
// into the f32 accumulator block by block. The integer sums are exact, so
// the GPU's results differ from the CPU's only in the f32 epilogue's order.
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/GpuLoops.h"
#include "compiler/halide/Lowering.h"

#include <stdexcept>

using namespace Halide;

namespace tmc::halide {

namespace {

/// The names of one GEMM's output and accumulator loops.
struct GemmLoops {
  Var n, t, j, ta, p;
  Var to{"to"}, ti{"ti"}, tt{"tt"}, tl{"tl"};
  int P, rpt, rows;
  GemmLoops(GemmStages g, const GemmLayout &l, const Schedule &schedule)
      : n(g.out.args()[0]), t(g.out.args()[1]), j(g.acc.args()[0]), ta(g.acc.args()[1]),
        p(g.acc.args()[2]), P(l.panelWidth), rpt(std::max(1, schedule.gpuRowsPerThread)),
        rows(std::max(rpt, schedule.gpuTileRows / rpt * rpt)) {}
};

/// The output: a grid of (panel, row tile) blocks; threads over the panel's
/// features by row groups, each thread rpt rows, unrolled. The block's
/// accumulators live in shared memory with static extents (a fixed shared
/// allocation): rows past T (the last tile) accumulate the clamped last row
/// and are never stored, features past N the panel's zero padding.
void tileOutput(GemmStages g, GemmLoops &v) {
  const TailStrategy guard = TailStrategy::GuardWithIf;
  Func out = g.out, acc = g.acc;
  out.split(v.n, v.p, v.j, v.P, guard)
      .split(v.t, v.to, v.ti, v.rows, guard)
      .split(v.ti, v.tt, v.tl, v.rpt)
      .reorder(v.tl, v.j, v.tt, v.p, v.to)
      .unroll(v.tl);
  gpuThreads(out, {v.j, v.tt});
  gpuBlocks(out, {v.p, v.to});
  // Thread (j, tt) owns rows tt * rpt + tl; the output stage reads them back
  // from the same thread.
  acc.split(v.ta, v.tt, v.tl, v.rpt).reorder(v.tl, v.j, v.tt, v.p).unroll(v.tl);
  gpuThreads(acc, {v.j, v.tt});
  acc.compute_at(out, v.p).bound_extent(v.j, v.P).bound_extent(v.ta, v.rows);
  if (!gpuSchedulesOnHost())
    acc.store_in(MemoryType::GPUShared);
}

void scheduleF32(GemmStages g, GemmLoops &v, const GemmLayout &l, const Schedule &schedule) {
  const TailStrategy guard = TailStrategy::GuardWithIf;
  const int kc = std::max(1, std::min<int>(schedule.gpuKChunk, static_cast<int>(l.K)));
  RVar r = g.acc.rvars(0)[0], ro("ro"), ri("ri");
  Stage update = g.acc.update();
  update.split(r, ro, ri, kc, guard)
      .split(v.ta, v.tt, v.tl, v.rpt)
      .reorder(v.tl, ri, v.j, v.tt, ro, v.p)
      .unroll(v.tl);
  gpuThreads(update, {v.j, v.tt});

  // Shared-memory staging per K slab: the slab of token rows and the slab of
  // the weight panel, loaded cooperatively by the block's threads.
  Func xc = g.tokens;
  Var xn = xc.args()[0], xt = xc.args()[1];
  xc.compute_at(g.acc, ro);
  gpuThreads(xc, {xn, xt});
  Func panel = g.packed.in(g.acc);
  Var pj = panel.args()[0], pk = panel.args()[1], pko("pko"), pki("pki");
  panel.compute_at(g.acc, ro)
      .split(pk, pko, pki, std::max(1, schedule.gpuThreads / v.P), guard)
      .reorder(pj, pki, pko);
  gpuThreads(panel, {pj, pki});
}

/// A dot-product group (bf16's pair, a quad of int8 products) inside one
/// thread: on the GPU a vector reduction (dp4a for the quads), on the host
/// unrolled (the integer sums are the same in any order).
void dotGroup(Stage s, const RVar &group, bool quads) {
  if (quads && !gpuSchedulesOnHost())
    s.atomic().vectorize(group);
  else
    s.unroll(group);
}

/// Quads per chunk of an int8 GEMM's reduction: the largest of 16, 8, 4, 2
/// dividing the quads (a split that divides needs no tail guard, which
/// rfactor cannot take).
int64_t quadChunk(int64_t quads) {
  for (int64_t chunk : {16, 8, 4, 2})
    if (quads % chunk == 0)
      return chunk;
  return 1;
}

/// The per-call token stages: kernels of their own, a thread per pair or
/// quad (or per block for q4's sums), a block of threads per row tile.
void scheduleTokens(GemmStages g, const GemmLayout &l, const Schedule &schedule) {
  Func rounded = g.roundedTokens;
  Var e = rounded.args()[0], kk = rounded.args()[1], t = rounded.args()[2];
  Var ko("ko"), ki("ki");
  const int64_t groups = l.bf16 ? l.kPairs : l.kQuads;
  rounded.compute_root()
      .bound(e, 0, l.bf16 ? 2 : 4)
      .reorder(e, kk, t)
      .unroll(e)
      .split(kk, ko, ki, threadsFor(groups, schedule.gpuThreads), TailStrategy::GuardWithIf);
  gpuThreads(rounded, {ki});
  gpuBlocks(rounded, {ko, t});
  if (l.quantized()) {
    g.rowMax.compute_root();
    gpuTileFunc(g.rowMax, threadsFor(32, schedule.gpuThreads));
  }
  if (l.q4) {
    g.tokenBlockSums.compute_root();
    gpuTileFunc(g.tokenBlockSums, threadsFor(l.q4Blocks, schedule.gpuThreads));
  }
}

void scheduleReduced(GemmStages g, GemmLoops &v, const GemmLayout &l, const Schedule &schedule) {
  scheduleTokens(g, l, schedule);
  std::vector<RVar> r = g.acc.rvars(0);
  if (l.q4 || l.int8) {
    // Per-thread int32 sums (rpt rows of the thread's feature) computed at
    // a reduction loop of the f32 (int8: int32) tile: q4's blocks, int8's
    // chunks of quads (a vector reduction into the block-wide shared tile
    // itself would store through atomics).
    Func sums = g.blockSums;
    RVar outer = r[0];
    std::vector<RVar> rq; // (quad lane, quad of the block or chunk)
    if (l.int8) {
      RVar co("quad_chunk"), ci("quad_in_chunk");
      const int chunk = static_cast<int>(quadChunk(l.kQuads));
      sums = g.acc.update().split(r[1], co, ci, chunk).rfactor(co, Var("c"));
      outer = co;
      rq = {r[0], ci};
    } else {
      rq = sums.rvars(0);
    }
    Stage update = g.acc.update();
    update.split(v.ta, v.tt, v.tl, v.rpt).reorder(v.tl, outer, v.j, v.tt, v.p).unroll(v.tl);
    gpuThreads(update, {v.j, v.tt});
    Var sj = sums.args()[0], st = sums.args()[1];
    sums.compute_at(g.acc, outer).bound_extent(st, v.rpt).unroll(st);
    Stage sum = sums.update();
    sum.reorder(rq[0], st, rq[1], sj).unroll(st);
    dotGroup(sum, rq[0], /*quads=*/true);
    return;
  }
  // bf16: the pair innermost, then the thread's rows, then the steps.
  Stage update = g.acc.update();
  update.split(v.ta, v.tt, v.tl, v.rpt)
      .reorder(r[0], v.tl, r[1], v.j, v.tt, v.p)
      .unroll(v.tl)
      .unroll(r[0]);
  gpuThreads(update, {v.j, v.tt});
}

} // namespace

void scheduleGemmGpu(const GemmStages &gemm, const GemmLayout &l, const Schedule &schedule) {
  if (l.kBlocks > 1)
    throw std::runtime_error("GPU GEMM schedules take the whole reduction (k_block=0), got "
                             "k_block=" +
                             std::to_string(schedule.kBlock));
  GemmLoops loops(gemm, l, schedule);
  tileOutput(gemm, loops);
  if (l.bf16 || l.quantized())
    scheduleReduced(gemm, loops, l, schedule);
  else
    scheduleF32(gemm, loops, l, schedule);
}

} // namespace tmc::halide
