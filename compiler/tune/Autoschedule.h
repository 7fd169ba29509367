//===- Autoschedule.h - Seeds from Halide's autoschedulers ------*- C++ -*-===//
//
// Debian's Halide 14 ships the Mullapudi2016, Adams2019 and Li2018
// autoschedulers as plugins. Each is run (in a child process, under a
// timeout) on the same pipeline tmc compiles for a kernel, with the estimates
// the lowering sets (T = tokensEstimate). Their schedules are free-form Halide
// directives over tmc's Funcs, which tmc's Schedule data cannot express and
// `tmc compile --tuning-db` could not reproduce; so they only seed the search:
// the vector width, tile and block sizes they chose for the output (and the
// reduction) are read from the schedule source and mapped onto the Schedule
// fields, and the measured search decides.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"

#include <string>
#include <vector>

namespace tmc::tune {

struct AutoschedulerSeed {
  std::string scheduler; ///< Mullapudi2016 | Adams2019 | Li2018
  bool ok = false;
  std::string error;     ///< why there is no seed
  Schedule schedule;     ///< the seed (before canonicalisation)
  std::string source;    ///< the autoscheduler's schedule, as Halide printed it
};

/// Runs every available autoscheduler on `kernel`'s pipeline (linear and
/// attention kernels: the others set no estimates); `dir` holds scratch files.
std::vector<AutoschedulerSeed> autoschedulerSeeds(const KernelDesc &kernel,
                                                  const TargetInfo &target,
                                                  const std::string &dir, int threads,
                                                  double timeoutSeconds);

/// Maps a schedule source onto `base`'s fields (exposed for tests).
Schedule seedFromSource(const KernelDesc &kernel, const TargetInfo &target,
                        const std::string &outputName, const std::string &source,
                        const Schedule &base);

} // namespace tmc::tune
