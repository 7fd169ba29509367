//===- window_cache.cpp - Caches bounded by a window, runs in chunks ------===//
//
// A cache that only sliding-window attention reads (tmk-window-caches) keeps
// the `keep` positions a run's first query can see before it, and the run's
// own: `capacity` = keep + chunk rows instead of max_seq. Its rows hold
// consecutive positions from the one its header names; when a run would not
// fit after them, the kept rows move to the front first (at most `keep` rows
// per `chunk` tokens appended, against the window of rows each token's
// attention reads). The attention kernels read keys by position: their view
// of the cache starts at that first position (View::startAt).
//
// A run longer than the chunk would need more rows at once, so the
// executor feeds it in consecutive runs of at most `chunk` tokens: what the
// model computes for a token depends on the tokens before it only through
// the caches (tmk-window-caches checks the model for that).
//
//===----------------------------------------------------------------------===//

#include "runtime/executor_support.h"

#include <cstring>

namespace tmr::executor {

namespace {

/// The first bytes of a bounded cache (the cache memory starts zeroed: a new
/// sequence's header says positions from 0, none appended).
struct RingHeader {
  int64_t first; ///< the position its first row holds
  int64_t end;   ///< one past the last position appended
};
constexpr int64_t kRingHeaderBytes = TMR_RING_HEADER_BYTES;
static_assert(sizeof(RingHeader) <= kRingHeaderBytes);

int64_t elementBytes(CacheStorage storage) { return storage == CacheStorage::F32 ? 4 : 2; }

/// Runs one sequence's tokens (`one` has no sequences) in consecutive runs
/// of at most `chunk` tokens.
int runSequence(const tmr_run_args &one, const tmr_model_desc &model, int64_t chunk,
                tmr_run_fn runChunk, char *err, size_t errLen) {
  for (int64_t done = 0; done < one.num_tokens; done += chunk) {
    tmr_run_args part = one;
    part.tokens = one.tokens + done;
    part.num_tokens = std::min(chunk, one.num_tokens - done);
    part.offset = one.offset + done;
    if (!model.encoder_decoder) {
      // The segment ids label the tokens (an encoder-decoder's, its source).
      part.segments = one.segments ? one.segments + done : nullptr;
      // Nothing a chunked model runs reads a decoder's valid length (no
      // padded self-attention), and a chunk may be shorter than it.
      part.length = 0;
    }
    // Each chunk's last row replaces the one before it.
    part.output = one.last_row_only ? one.output : one.output + done * model.output_width;
    if (int rc = runChunk(&part, err, errLen))
      return rc;
  }
  return 0;
}

} // namespace

int32_t ringFirstPosition(const void *cache) {
  return static_cast<int32_t>(static_cast<const RingHeader *>(cache)->first);
}

int appendRingRows(void *cache, CacheStorage storage, int64_t width, int64_t capacity, int64_t keep,
                   int32_t offset, const float *rows, int32_t count, int64_t rowStride,
                   const char *name, char *err, size_t errLen) {
  RingHeader &header = *static_cast<RingHeader *>(cache);
  uint8_t *data = static_cast<uint8_t *>(cache) + kRingHeaderBytes;
  if (offset == 0) // a new sequence
    header = RingHeader{0, 0};
  if (offset > header.end)
    return fail(err, errLen,
                "cache '%s' holds %lld tokens; a run after %d cached ones would read rows never "
                "written",
                name, static_cast<long long>(header.end), offset);
  const int64_t needed = std::max<int64_t>(0, offset - keep);
  if (needed < header.first)
    return fail(err, errLen,
                "cache '%s' keeps the last %lld positions of its window and now starts at %lld; "
                "a run after %d cached tokens reads position %lld: a sequence can go back at "
                "most to the positions its window still sees",
                name, static_cast<long long>(keep), static_cast<long long>(header.first), offset,
                static_cast<long long>(needed));
  const size_t rowBytes = static_cast<size_t>(width * elementBytes(storage));
  if (offset + count - header.first > capacity) {
    std::memmove(data, data + static_cast<size_t>(needed - header.first) * rowBytes,
                 static_cast<size_t>(offset - needed) * rowBytes);
    header.first = needed;
  }
  if (offset + count - header.first > capacity)
    return fail(err, errLen,
                "a run of %d tokens does not fit cache '%s' (%lld rows, %lld of them kept for its "
                "window): runs of this model carry at most %lld tokens",
                count, name, static_cast<long long>(capacity), static_cast<long long>(keep),
                static_cast<long long>(capacity - keep));
  appendCacheRows(data, storage, width, static_cast<int32_t>(offset - header.first), rows, count,
                  rowStride);
  header.end = offset + count;
  return 0;
}

int runInChunks(const tmr_run_args &args, const tmr_model_desc &model, int64_t chunk,
                tmr_run_fn runChunk, char *err, size_t errLen) {
  // A malformed run fails as it would in one piece.
  RunSizes sizes;
  if (int rc = checkRun(args, model, &sizes, err, errLen))
    return rc;
  if (args.num_sequences == 0)
    return args.num_tokens <= chunk ? runChunk(&args, err, errLen)
                                    : runSequence(args, model, chunk, runChunk, err, errLen);
  bool fits = true;
  for (int32_t b = 0; b < args.num_sequences; ++b)
    fits = fits && args.sequences[b].num_tokens <= chunk;
  if (fits)
    return runChunk(&args, err, errLen);
  // One by one, each as a run of its own.
  int64_t first = 0;
  for (int32_t b = 0; b < args.num_sequences; ++b) {
    const tmr_sequence_run &s = args.sequences[b];
    tmr_run_args one = args;
    one.num_sequences = 0;
    one.sequences = nullptr;
    one.tokens = args.tokens + first;
    one.num_tokens = s.num_tokens;
    // A run of one encoder-decoder sequence labels its source's segments.
    one.segments = model.encoder_decoder ? s.source_segments
                   : args.segments       ? args.segments + first
                                         : nullptr;
    one.offset = s.offset;
    one.length = s.length;
    one.cache = s.cache;
    one.source_tokens = s.source_tokens;
    one.num_source_tokens = s.num_source_tokens;
    one.output = args.output + (args.last_row_only ? b : first) * model.output_width;
    if (int rc = runSequence(one, model, chunk, runChunk, err, errLen))
      return rc;
    first += s.num_tokens;
  }
  return 0;
}

} // namespace tmr::executor
