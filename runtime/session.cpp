//===- session.cpp - One sequence's state across runs of a model ----------===//

#include "runtime/session.h"

#include "runtime/mapping_guard.h"

#include <limits>

namespace tmr {

bool runExecutor(const tmr_model_desc &desc, const tmr_run_args &args,
                 const std::vector<const void *> &weights, std::string *error, bool *weightsLost) {
  char message[1024] = {0};
  int status = desc.run(&args, message, sizeof message);
  // Weights read in place from a file truncated during the run came back as
  // zeros (mapping_guard.h): whatever the run computed from them is wrong.
  if (std::string lost = lostWeightsError(weights); !lost.empty()) {
    if (weightsLost)
      *weightsLost = true;
    *error = std::move(lost);
    return false;
  }
  if (status != 0) {
    message[sizeof message - 1] = '\0';
    *error = message[0]
                 ? message
                 : "the model failed (status " + std::to_string(status) + ") without a message";
    return false;
  }
  return true;
}

Session::Session(const tmr_model_desc &desc, const std::vector<const void *> &weights,
                 const void *prepared, int32_t threads)
    : desc(desc), weightPointers(&weights), preparedWeights(prepared), threadCount(threads),
      cache(static_cast<size_t>(desc.cache_bytes)), arena(static_cast<size_t>(desc.arena_floats)) {}

bool Session::run(const std::vector<int32_t> &tokens, const std::vector<int32_t> &segments,
                  AlignedVector<float> *output, std::string *error, bool lastRowOnly) {
  int64_t count = static_cast<int64_t>(tokens.size());
  tmr_run_args args{};
  args.weights = weightPointers->data();
  args.prepared = preparedWeights;
  args.tokens = tokens.data();
  args.num_tokens = count;
  args.segments = segments.empty() ? nullptr : segments.data();
  args.offset = cachedTokens;
  // An encoder's padding applies to the prompt run; decoding steps see all.
  args.length = cachedTokens == 0 || desc.encoder_decoder ? length : 0;
  args.source_tokens = source.empty() ? nullptr : source.data();
  args.num_source_tokens = static_cast<int64_t>(source.size());
  args.cache = cache.data();
  args.num_threads = threadCount;
  args.arena = arena.data();
  args.last_row_only = lastRowOnly ? 1 : 0;
  // Filled with NaN when (re)sized, so that any element the model fails to
  // write is visible. A buffer that has the size already (the caller's, from
  // a run of the same shape) is not filled again: a model leaves the same
  // elements unwritten in every run of a shape, so they still read NaN, and
  // the refill wrote the whole output once more per run (a prompt's logits:
  // 16 MB for a 32000-token head, 3% of a d_model-128 model's prefill).
  const size_t outputSize = static_cast<size_t>(tmr_output_rows(&desc, &args) * desc.output_width);
  if (output->size() != outputSize)
    output->assign(outputSize, std::numeric_limits<float>::quiet_NaN());
  args.output = output->data();
  if (!runExecutor(desc, args, *weightPointers, error))
    return false;
  if (desc.cache_bytes > 0)
    cachedTokens += count;
  return true;
}

bool Session::weightsLost() const { return !lostWeightsError(*weightPointers).empty(); }

void Session::copyStateFrom(const Session &other) {
  cache = other.cache;
  source = other.source;
  length = other.length;
  cachedTokens = other.cachedTokens;
}

} // namespace tmr
