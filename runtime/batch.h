//===- batch.h - Many sequences of one model run together -------*- C++ -*-===//
//
// A batch holds up to `slots` sequences, each with its own key/value caches
// and position. One run advances any subset of them: prompts of different
// lengths (each appended after what its slot holds) or a decoding step of
// every active slot. Where the compiled model batches (tmr_model_desc's
// max_batch > 1) such a run is one call of the executor: its linears
// multiply all the rows at once (a GEMM, not one GEMV per sequence) and its
// attention runs per sequence over the sequence's own cache. Slots join and
// leave between runs (continuous batching): reset() frees one for a new
// sequence. Results do not depend on what else shares a run.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/aligned.h"
#include "runtime/tmr_abi.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tmr {

class Batch {
public:
  /// One sequence's part of a run.
  struct Input {
    int32_t slot = 0;
    const int32_t *tokens = nullptr;
    int64_t count = 0;
    const int32_t *segments = nullptr; ///< null: all 0
    int64_t length = 0;                ///< valid (unpadded) tokens of a new sequence; 0: all
  };

  /// `weights` and `prepared` as for Session; `slots` >= 1. The caches of a
  /// slot are allocated on its first run.
  Batch(const tmr_model_desc &desc, const std::vector<const void *> &weights, const void *prepared,
        int32_t slots, int32_t threads);

  /// Encoder-decoders: the source the next sequence of `slot` decodes from,
  /// its segment ids (empty: all 0) and valid length (0: all). The slot's
  /// first run encodes it, together with the sources of the run's other new
  /// sequences; reset() forgets it. An encoder-decoder's inputs carry no
  /// segments or length of their own: those label the source. False +
  /// *error for ids, segments or a length out of range.
  bool setSource(int32_t slot, std::vector<int32_t> tokens, std::vector<int32_t> segments,
                 int64_t length, std::string *error);

  /// Runs every input's tokens after those its slot holds; a slot appears at
  /// most once. `output` receives each input's rows one after the other
  /// ([rows, output_width]), or with `lastRowOnly` each input's last row
  /// ([inputs, output_width]). A run longer than one executor call holds is
  /// split into calls; a model that does not batch runs its inputs one by
  /// one. Fails naming the input and slot; on failure no slot's position
  /// moves, but the caches of the slots in the run are undefined past it.
  /// What made a run fail.
  enum class Failure { Input, Range, Memory, Io, Model };
  bool run(const std::vector<Input> &inputs, bool lastRowOnly, AlignedVector<float> *output,
           std::string *error, Failure *failure = nullptr);

  /// Output rows of one input of `count` tokens: the model's fixed rows (a
  /// classifier's), one with `lastRowOnly`, else one per token.
  int64_t outputRows(int64_t count, bool lastRowOnly) const {
    return desc.output_rows ? desc.output_rows : lastRowOnly ? 1 : count;
  }

  /// Frees `slot` for a new sequence (and, in an encoder-decoder, source).
  void reset(int32_t slot) {
    positions.at(static_cast<size_t>(slot)) = 0;
    sources.at(static_cast<size_t>(slot)) = Source{};
  }
  int64_t position(int32_t slot) const { return positions.at(static_cast<size_t>(slot)); }
  int32_t slots() const { return static_cast<int32_t>(positions.size()); }
  /// Sequences one executor call carries.
  int32_t callWidth() const { return perCall; }
  const tmr_model_desc &model() const { return desc; }

private:
  bool runChecked(const std::vector<Input> &inputs, bool lastRowOnly, AlignedVector<float> *output,
                  std::string *error, Failure *failure);
  bool check(const std::vector<Input> &inputs, std::string *error, Failure *failure) const;
  /// One executor call over inputs [begin, end), its rows written at `out`.
  bool call(const std::vector<Input> &inputs, size_t begin, size_t end, bool lastRowOnly,
            float *out, std::string *error, Failure *failure);

  const tmr_model_desc &desc;
  const std::vector<const void *> *weightPointers;
  const void *preparedWeights;
  int32_t threadCount;
  int32_t perCall;
  /// Per slot, allocated by its first run: zeroed, and only rows written
  /// are resident.
  std::vector<std::unique_ptr<AlignedArray<uint8_t>>> caches;
  std::vector<int64_t> positions;
  /// Per slot, an encoder-decoder's source (setSource).
  struct Source {
    std::vector<int32_t> tokens, segments;
    int64_t length = 0;
  };
  std::vector<Source> sources;
  /// Rows one call may carry in all, and their arena (uninitialized, so that
  /// only rows in use are resident).
  int64_t arenaRows;
  AlignedArray<float> arena;
};

} // namespace tmr
