//===- session.h - One sequence's state across runs of a model --*- C++ -*-===//
//
// A decoder's sequence is fed in runs (the prompt, then one token per step);
// the session owns the key/value caches between them and knows how many
// tokens they hold. Beam search forks sessions by copying their state.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/aligned.h"
#include "runtime/tmr_abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmr {

/// Runs `args` through `desc`'s executor; false + *error (the executor's
/// message, or the weights file's truncation under the run, which also sets
/// *weightsLost when given) on failure.
bool runExecutor(const tmr_model_desc &desc, const tmr_run_args &args,
                 const std::vector<const void *> &weights, std::string *error,
                 bool *weightsLost = nullptr);

class Session {
public:
  /// `weights` (in manifest order) and `prepared` (the model's prepare()
  /// result for them, or null) must outlive the session.
  Session(const tmr_model_desc &desc, const std::vector<const void *> &weights,
          const void *prepared, int32_t threads);

  /// Runs `tokens` after those already cached; `output` receives their rows
  /// ([rows, output_width]), or with `lastRowOnly` (a model with one output
  /// row per token) the last token's row alone, the output kernel run for
  /// that row only: all that generation reads of a prompt. Empty `segments`
  /// means all 0. The output is
  /// aligned so that the kernels write it in place: an unaligned one would
  /// cost the model a buffer of its own and a copy per run (a prompt's
  /// logits are [tokens, vocab]: 26 MB for GPT-2 at 128 tokens).
  /// Fails, naming the file, when the weights file shrank under the model
  /// (weightsLost()).
  bool run(const std::vector<int32_t> &tokens, const std::vector<int32_t> &segments,
           AlignedVector<float> *output, std::string *error, bool lastRowOnly = false);

  /// An encoder-decoder's source, encoded by the first run and read by all.
  void setSource(std::vector<int32_t> tokens) { source = std::move(tokens); }

  /// The valid length of the first stack's input (0: all of it).
  void setLength(int64_t valid) { length = valid; }

  /// Starts a new sequence: no cached tokens, no source, no padding.
  void reset() {
    cachedTokens = 0;
    source.clear();
    length = 0;
  }

  /// Takes over `other`'s caches and position (same model).
  void copyStateFrom(const Session &other);

  /// Whether a weights file that runs read in place was truncated under them
  /// (mapping_guard.h): every run fails from then on.
  bool weightsLost() const;

  int64_t cached() const { return cachedTokens; }
  const std::vector<const void *> &weights() const { return *weightPointers; }
  const void *prepared() const { return preparedWeights; }
  int32_t threads() const { return threadCount; }
  const tmr_model_desc &model() const { return desc; }

private:
  const tmr_model_desc &desc;
  const std::vector<const void *> *weightPointers;
  const void *preparedWeights;
  int32_t threadCount;
  AlignedVector<uint8_t> cache; ///< the model's cache_bytes (rows of f32, f16 or bf16)
  /// The activation arena of every run, sized by the model's memory plan for
  /// max_seq tokens; left uninitialized so that only the rows runs use are
  /// ever resident.
  AlignedArray<float> arena;
  std::vector<int32_t> source;
  int64_t length = 0;
  int64_t cachedTokens = 0;
};

} // namespace tmr
