//===- batch.cpp - Many sequences of one model run together ---------------===//

#include "runtime/batch.h"

#include "runtime/session.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

namespace tmr {

namespace {

/// Sequences one executor call may carry.
int32_t callWidthOf(const tmr_model_desc &desc) { return desc.max_batch > 1 ? desc.max_batch : 1; }

/// Whether every one of `count` ids is in [0, limit); else false + *error
/// ("WHICH: KIND ID at index I is outside [0, limit - 1]").
bool idsInRange(const int32_t *ids, int64_t count, int64_t limit, const std::string &which,
                const char *kind, std::string *error) {
  for (int64_t t = 0; t < count; ++t)
    if (ids[t] < 0 || ids[t] >= limit) {
      *error = which + ": " + kind + " " + std::to_string(ids[t]) + " at index " +
               std::to_string(t) + " is outside [0, " + std::to_string(limit - 1) + "]";
      return false;
    }
  return true;
}

} // namespace

Batch::Batch(const tmr_model_desc &desc, const std::vector<const void *> &weights,
             const void *prepared, int32_t slots, int32_t threads)
    : desc(desc), weightPointers(&weights), preparedWeights(prepared), threadCount(threads),
      perCall(callWidthOf(desc)), caches(static_cast<size_t>(std::max(slots, 1))),
      positions(static_cast<size_t>(std::max(slots, 1)), 0),
      sources(static_cast<size_t>(std::max(slots, 1))),
      arenaRows(std::max<int64_t>(desc.max_seq, perCall)),
      arena(static_cast<size_t>(
          (desc.arena_row_floats > 0 ? desc.arena_row_floats * arenaRows : desc.arena_floats))) {
  // A model compiled before arena_row_floats existed runs one sequence per call.
  if (desc.arena_row_floats <= 0) {
    perCall = 1;
    arenaRows = desc.max_seq;
  }
}

bool Batch::setSource(int32_t slot, std::vector<int32_t> tokens, std::vector<int32_t> segments,
                      int64_t length, std::string *error) {
  const std::string which = "slot " + std::to_string(slot);
  if (!desc.encoder_decoder) {
    *error = which + ": only an encoder-decoder model decodes from a source";
    return false;
  }
  if (slot < 0 || slot >= slots()) {
    *error = which + " is outside [0, " + std::to_string(slots() - 1) + "]";
    return false;
  }
  // Its caches hold the keys and values of the source it started from.
  if (positions[static_cast<size_t>(slot)] != 0) {
    *error = which + " holds a sequence (" + std::to_string(positions[static_cast<size_t>(slot)]) +
             " tokens): reset it before giving it a new source";
    return false;
  }
  const auto count = static_cast<int64_t>(tokens.size());
  if (count < 1 || count > desc.max_seq) {
    *error = which + ": a source of " + std::to_string(count) + " tokens; the model takes 1 to " +
             std::to_string(desc.max_seq);
    return false;
  }
  if (!idsInRange(tokens.data(), count, desc.vocab, which, "source token", error))
    return false;
  if (!segments.empty() && static_cast<int64_t>(segments.size()) != count) {
    *error = which + ": " + std::to_string(segments.size()) + " segment ids for a source of " +
             std::to_string(count) + " tokens";
    return false;
  }
  if (!idsInRange(segments.data(), static_cast<int64_t>(segments.size()),
                  std::max<int64_t>(desc.segments, 1), which, "segment id", error))
    return false;
  if (length < 0 || length > count) {
    *error = which + ": length " + std::to_string(length) + " is outside [0, " +
             std::to_string(count) + "] (0: the whole source is valid)";
    return false;
  }
  sources[static_cast<size_t>(slot)] = {std::move(tokens), std::move(segments), length};
  return true;
}

bool Batch::check(const std::vector<Input> &inputs, std::string *error, Failure *failure) const {
  *failure = Failure::Range;
  if (inputs.empty()) {
    *failure = Failure::Input;
    *error = "a run needs at least one sequence";
    return false;
  }
  std::vector<bool> seen(positions.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Input &in = inputs[i];
    std::string which = "sequence " + std::to_string(i) + " (slot " + std::to_string(in.slot) + ")";
    if (in.slot < 0 || in.slot >= slots()) {
      *error = "sequence " + std::to_string(i) + ": slot " + std::to_string(in.slot) +
               " is outside [0, " + std::to_string(slots() - 1) + "]";
      return false;
    }
    if (seen[static_cast<size_t>(in.slot)]) {
      *failure = Failure::Input;
      *error = which + ": the slot appears twice in one run";
      return false;
    }
    seen[static_cast<size_t>(in.slot)] = true;
    const int64_t held = positions[static_cast<size_t>(in.slot)];
    if (in.count < 1 || !in.tokens || held + in.count > desc.max_seq) {
      *error = which + ": " + std::to_string(in.count) + " tokens after " + std::to_string(held) +
               " held: the model takes 1 to " + std::to_string(desc.max_seq) + " in all";
      return false;
    }
    if (!idsInRange(in.tokens, in.count, desc.vocab, which, "token", error) ||
        (in.segments && !idsInRange(in.segments, in.count, std::max<int64_t>(desc.segments, 1),
                                    which, "segment id", error)))
      return false;
    if (desc.encoder_decoder) {
      *failure = Failure::Input;
      if (in.segments || in.length != 0) {
        *error = which + ": an encoder-decoder's segment ids and length label its source "
                         "(set with the source), not the decoder's tokens";
        return false;
      }
      if (held == 0 && sources[static_cast<size_t>(in.slot)].tokens.empty()) {
        *error = which + ": a new sequence of an encoder-decoder needs its source first";
        return false;
      }
      *failure = Failure::Range;
    }
    if (in.length < 0 || in.length > in.count || (in.length > 0 && held > 0)) {
      *error = which + ": length " + std::to_string(in.length) +
               (held > 0 ? " applies to a new sequence only"
                         : " is outside [0, " + std::to_string(in.count) + "]");
      return false;
    }
  }
  return true;
}

bool Batch::call(const std::vector<Input> &inputs, size_t begin, size_t end, bool lastRowOnly,
                 float *out, std::string *error, Failure *failure) {
  *failure = Failure::Model;
  std::vector<tmr_sequence_run> runs;
  std::vector<int32_t> tokens, segments;
  bool anySegments = false;
  for (size_t i = begin; i < end; ++i)
    anySegments = anySegments || inputs[i].segments;
  for (size_t i = begin; i < end; ++i) {
    const Input &in = inputs[i];
    auto &cache = caches[static_cast<size_t>(in.slot)];
    if (desc.cache_bytes > 0 && !cache) {
      auto bytes = static_cast<size_t>(desc.cache_bytes);
      cache = std::make_unique<AlignedArray<uint8_t>>(bytes);
      if (!cache->data()) {
        cache.reset();
        *failure = Failure::Memory;
        *error = "out of memory for slot " + std::to_string(in.slot) + "'s caches";
        return false;
      }
      if (!alignedBlockIsMapped(bytes)) // mapped pages are zero already
        std::memset(cache->data(), 0, bytes);
    }
    tmr_sequence_run run{};
    run.num_tokens = in.count;
    run.offset = positions[static_cast<size_t>(in.slot)];
    run.length = in.length;
    run.cache = cache ? cache->data() : nullptr;
    if (desc.encoder_decoder) {
      const Source &source = sources[static_cast<size_t>(in.slot)];
      run.length = source.length;
      run.source_tokens = source.tokens.data();
      run.source_segments = source.segments.empty() ? nullptr : source.segments.data();
      run.num_source_tokens = static_cast<int64_t>(source.tokens.size());
    }
    runs.push_back(run);
    tokens.insert(tokens.end(), in.tokens, in.tokens + in.count);
    if (anySegments) {
      if (in.segments)
        segments.insert(segments.end(), in.segments, in.segments + in.count);
      else
        segments.resize(segments.size() + static_cast<size_t>(in.count), 0);
    }
  }
  tmr_run_args args{};
  args.weights = weightPointers->data();
  args.prepared = preparedWeights;
  args.tokens = tokens.data();
  args.num_tokens = static_cast<int64_t>(tokens.size());
  args.segments = anySegments ? segments.data() : nullptr;
  args.num_threads = threadCount;
  args.arena = arena.data();
  args.last_row_only = lastRowOnly ? 1 : 0;
  args.output = out;
  if (perCall > 1) {
    args.num_sequences = static_cast<int32_t>(runs.size());
    args.sequences = runs.data();
  } else {
    // One sequence, as a model without batched runs takes it.
    args.offset = runs[0].offset;
    args.length = runs[0].length;
    args.cache = runs[0].cache;
    if (desc.encoder_decoder) {
      // The segment ids of a single run label the source.
      args.source_tokens = runs[0].source_tokens;
      args.num_source_tokens = runs[0].num_source_tokens;
      args.segments = runs[0].source_segments;
    }
  }
  bool lost = false;
  if (!runExecutor(desc, args, *weightPointers, error, &lost)) {
    if (lost)
      *failure = Failure::Io; // the weights file was truncated under the run
    return false;
  }
  return true;
}

bool Batch::run(const std::vector<Input> &inputs, bool lastRowOnly, AlignedVector<float> *output,
                std::string *error, Failure *failure) {
  Failure ignored;
  if (!failure)
    failure = &ignored;
  // Caches and outputs are allocated here: a failure is this run's, not the
  // caller's (a server's engine thread) to die of.
  try {
    return runChecked(inputs, lastRowOnly, output, error, failure);
  } catch (const std::bad_alloc &) {
    *failure = Failure::Memory;
    *error = "out of memory for the run's caches or output";
    return false;
  }
}

bool Batch::runChecked(const std::vector<Input> &inputs, bool lastRowOnly,
                       AlignedVector<float> *output, std::string *error, Failure *failure) {
  if (!check(inputs, error, failure))
    return false;
  if (lastRowOnly && desc.output_rows != 0) {
    *failure = Failure::Input;
    *error = "this model's output is " + std::to_string(desc.output_rows) +
             " row(s) per sequence, not one per token";
    return false;
  }
  const int64_t width = desc.output_width;
  int64_t rows = 0;
  for (const Input &in : inputs)
    rows += outputRows(in.count, lastRowOnly);
  // NaN, so that any element the model fails to write is visible.
  output->assign(static_cast<size_t>(rows * width), std::numeric_limits<float>::quiet_NaN());
  // Consecutive inputs share a call while their rows fit the arena.
  size_t begin = 0;
  int64_t written = 0;
  while (begin < inputs.size()) {
    size_t end = begin;
    int64_t callRows = 0, sourceRows = 0, outRows = 0;
    // An encoder-decoder's new sequences encode their sources in the call's
    // arena too.
    auto encodes = [&](const Input &in) -> int64_t {
      const auto slot = static_cast<size_t>(in.slot);
      return desc.encoder_decoder && positions[slot] == 0
                 ? static_cast<int64_t>(sources[slot].tokens.size())
                 : 0;
    };
    while (end < inputs.size() && end - begin < static_cast<size_t>(perCall) &&
           (end == begin || (callRows + inputs[end].count <= arenaRows &&
                             sourceRows + encodes(inputs[end]) <= arenaRows))) {
      callRows += inputs[end].count;
      sourceRows += encodes(inputs[end]);
      outRows += outputRows(inputs[end].count, lastRowOnly);
      ++end;
    }
    if (!call(inputs, begin, end, lastRowOnly, output->data() + written * width, error, failure)) {
      if (begin > 0 || end < inputs.size())
        *error =
            "sequences " + std::to_string(begin) + ".." + std::to_string(end - 1) + ": " + *error;
      return false;
    }
    written += outRows;
    begin = end;
  }
  if (desc.cache_bytes > 0)
    for (const Input &in : inputs)
      positions[static_cast<size_t>(in.slot)] += in.count;
  return true;
}

} // namespace tmr
