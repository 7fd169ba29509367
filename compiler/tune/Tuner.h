//===- Tuner.h - `tmc tune`: measured schedule search -----------*- C++ -*-===//
#pragma once

#include "frontend/ModelSpec.h"

#include <string>

namespace tmc::tune {

struct TuneOptions {
  std::string spec;         ///< MODEL.tm
  std::string db;           ///< --db FILE
  std::string target = "host";
  double budgetSeconds = 600; ///< --budget: the whole run, profile included
  bool resume = false;      ///< continue from the database's entries
  int threads = 2;          ///< threads the kernels are timed with (HL_NUM_THREADS)
  int tokens = 128;         ///< T of the prefill measurement (capped at max_seq)
  double timeoutSeconds = 20; ///< per candidate run
  unsigned seed = 1;
  /// --max-trials: candidates measured per kernel in this run (0: as many as
  /// the budget allows). Bounds a run by work instead of time, so that a
  /// test's outcome does not depend on the machine's speed.
  int maxTrials = 0;
  std::string svg;          ///< --report: the chart's path (default: DB.svg)
  SpecOverrides overrides;  ///< --precision: the kernels of that model are tuned
  std::string kernelCache;  ///< --kernel-cache: candidates' objects reused by content

  /// Where --report writes the chart.
  std::string chartPath() const { return svg.empty() ? db + ".svg" : svg; }
};

/// Profiles the model's kernels, splits the budget by their share of the
/// model's time, searches each and keeps the database current after every
/// improvement. Returns the exit status (0, 1 failure, 2 usage).
int runTune(const TuneOptions &options);

/// `--report`: the table per kernel and the SVG of best-so-far per trial.
int runReport(const TuneOptions &options);

} // namespace tmc::tune
