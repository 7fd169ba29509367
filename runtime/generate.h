//===- generate.h - Token generation after a prompt -------------*- C++ -*-===//
#pragma once

#include "runtime/sampling.h"
#include "runtime/session.h"

#include <optional>
#include <string>
#include <vector>

namespace tmr {

struct GenerationOptions {
  int64_t maxNew = 0;
  std::optional<int32_t> stop;  ///< ends generation after this token
  SamplingOptions sampling;     ///< temperature 0: greedy
  int32_t beams = 1;            ///< > 1: length-normalized beam search (sampling unused)
  float lengthPenalty = 1.0f;
};

/// Generates up to maxNew tokens after the prompt `session` has run, whose
/// last output row is `lastLogits`. Every new token costs one decoding step
/// against the caches; the prompt is never recomputed.
///
/// With `generatedLogits`, also appends one row of logits per generated token:
/// the decoding step's output at that token's position, as computed from the
/// caches (so the last token costs one more step). For beam search these are
/// the chosen hypothesis's rows, replayed from the prompt's caches.
bool generate(Session &session, const std::vector<float> &lastLogits,
              const GenerationOptions &options, std::vector<int32_t> *generated,
              std::string *error, AlignedVector<float> *generatedLogits = nullptr);

} // namespace tmr
