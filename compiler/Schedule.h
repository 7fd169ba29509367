//===- Schedule.h - Kernel schedules as plain data --------------*- C++ -*-===//
//
// A schedule is a small struct, kept apart from the algorithms in
// HalideKernels*.cpp, so that the heuristic below, the tuner and the tuning
// database all speak the same language. Lowering reads it and never decides
// tiling on its own.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace tmc {

struct KernelDesc;
struct TargetInfo;

struct Schedule {
  int vectorWidth = 16; ///< f32 lanes per vector op
  int tileCols = 64;    ///< output features per register tile (multiple of vectorWidth)
  int tileRows = 4;     ///< tokens per register tile
  int queryTile = 16;   ///< attention: queries per parallel task
  bool parallel = true; ///< spread tiles over the thread pool

  /// One line, `key=value` pairs, as shown by --emit=halide and stored by the tuner.
  std::string str() const;
};

/// What tmc picks without a tuning database: register tiles sized to the
/// target's vector registers (16 lanes on AVX-512, 8 on AVX2).
Schedule defaultSchedule(const KernelDesc &kernel, const TargetInfo &target);

} // namespace tmc
