//===- GpuLoops.h - Grid and block loops of the CUDA schedules --*- C++ -*-===//
//
// Shared by GpuSchedule.cpp (every kernel kind) and GpuGemmSchedule.cpp.
// Under TMC_GPU_SCHEDULE_ON_HOST=1 (tests only, with a CPU --target) the
// same splits, tiles and compute levels run with blocks and threads as
// parallel host loops, so that the GPU schedules' numerics (tails, clamps,
// staging regions) are checked on machines without a GPU.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <Halide.h>

#include <vector>

namespace tmc::halide {

/// `vars` (at most three) as the block's threads, innermost first.
void gpuThreads(Halide::Stage s, const std::vector<Halide::VarOrRVar> &vars);
/// `vars` (at most three) as the grid's blocks, innermost first.
void gpuBlocks(Halide::Stage s, const std::vector<Halide::VarOrRVar> &vars);
/// Threads for a dimension of `extent` (<= 0: unknown): the smallest power
/// of two covering it, at most `limit` (and 1024).
int threadsFor(int64_t extent, int limit);
/// Dimension 0 of `args` split into `threads` threads, every other pure
/// dimension (and the dimension-0 tiles) a grid dimension; reduction loops
/// stay inside the thread, serial.
void gpuTileStage(Halide::Stage stage, const std::vector<Halide::Var> &args, int threads);
/// Every stage (pure and updates) of `f` tiled as gpuTileStage does.
void gpuTileFunc(Halide::Func f, int threads);

} // namespace tmc::halide
