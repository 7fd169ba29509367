//===- bench.h - --bench: timing a compiled model's runs --------*- C++ -*-===//
#pragma once

#include "runtime/session.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmr {

struct BenchInputs {
  std::vector<int32_t> tokens, segments, source;
  int64_t length = 0;
  int64_t maxNew = 0; ///< decoding steps timed after each prompt
  int runs = 5;       ///< measured runs, after one warm-up run
};

struct BenchResult {
  /// The median over runs of one prompt run (every row's output).
  double prefillMs = 0;
  /// With decoding steps: the median prompt run as generation makes it, the
  /// LM head for the last row only (what the first generated token waits for).
  double lastRowPrefillMs = 0;
  double decodeMs = 0; ///< median over all measured decoding steps (0: none)
  /// The steps' 10th and 90th percentiles: their spread, where a median
  /// alone would hide two kinds of step (a bimodal distribution).
  double decodeP10Ms = 0, decodeP90Ms = 0;
  int64_t decodeSteps = 0;
  int64_t peakRssBytes = 0;
};

/// Runs the prompt `runs + 1` times in fresh sessions (the first is a
/// warm-up): once computing every row's output and, with maxNew > 0, once as
/// generation does (the last row's logits), followed by maxNew greedy
/// decoding steps; reports medians: wall-clock times of whole runs, as a
/// user sees them.
bool benchmark(const tmr_model_desc &desc, const std::vector<const void *> &weights,
               const void *prepared, int32_t threads, const BenchInputs &inputs,
               BenchResult *result, std::string *error);

} // namespace tmr
