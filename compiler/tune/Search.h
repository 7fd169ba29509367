//===- Search.h - The schedule search space of one kernel -------*- C++ -*-===//
//
// Which schedule fields matter for a kernel kind, the values each may take,
// seeds (the heuristic schedule, its neighbours and the tile sizes Halide's
// autoschedulers choose for the same pipeline) and mutations for the
// evolutionary search in Tuner.cpp. The fields and their values come from
// the table of schedule fields (compiler/ScheduleFields.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"
#include "compiler/Schedule.h"
#include "compiler/ScheduleFields.h"
#include "compiler/Target.h"

#include <random>
#include <string>
#include <vector>

namespace tmc::tune {

class SearchSpace {
public:
  SearchSpace(const KernelDesc &kernel, const TargetInfo &target);

  /// The schedule with every field the kernel ignores set to the default's,
  /// so that equal behaviour means equal `str()`.
  Schedule canonical(Schedule schedule) const;

  /// Whether `schedule` is in the space (and compiles): GemmLayout
  /// constraints, register pressure of the GEMM tile; the reason if not.
  bool valid(const Schedule &schedule, std::string *why) const;

  /// The default first, then its neighbours. Every seed is valid and canonical.
  std::vector<Schedule> seeds() const;

  /// A random neighbour of `schedule`: one or two fields changed (valid and
  /// canonical, possibly equal to `schedule` when the space is tiny).
  Schedule mutate(const Schedule &schedule, std::mt19937 &rng) const;

  /// A child taking each field from `a` or `b`.
  Schedule crossover(const Schedule &a, const Schedule &b, std::mt19937 &rng) const;

  /// How many distinct schedules the space holds, to stop early on small spaces.
  size_t sizeEstimate() const;

  const Schedule &defaults() const { return base; }

  /// Whether `schedule` runs a decoding step (T = 1) exactly as the default
  /// does: the kernel has a variant kernel for that step (decodeKernelSuffix)
  /// and it takes the same schedule from both. Their T = 1 times then differ
  /// by noise only (at a few microseconds, often 2x), which must not reject
  /// a candidate.
  bool decodesAsDefault(const Schedule &schedule) const;

private:
  /// Gives `field` of `s` one of its values, at random.
  void randomize(Schedule &s, const ScheduleField &field, std::mt19937 &rng) const;

  KernelDesc kernel;
  TargetInfo target;
  Schedule base;
  /// The fields the search varies for this kernel, in table order.
  std::vector<const ScheduleField *> searched;
};

} // namespace tmc::tune
