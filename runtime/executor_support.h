//===- executor_support.h - What every generated executor calls -*- C++ -*-===//
//
// The fixed part of an executor: compiler/ExecutorGen.cpp writes only what
// depends on the model (its kernels' declarations, the checks and memory of
// run(), one block per kernel call, the model descriptor) and calls these
// for the rest: a run's argument checks, its working memory and output,
// Halide buffer views over memory the executor owns, the message of a failed
// kernel, and the per-kernel profile (TMR_PROFILE). They are part of
// libtmr_runtime.a, so they are compiled, warned about and sanitized with
// the runtime, and every executor of a multi-ISA executable shares them.
// The GPU part (persistent device weights) is runtime/executor_gpu.h.
//
// Header-only Halide: HalideRuntime.h for halide_buffer_t. The Halide
// runtime functions an executor calls come from its kernels' runtime object.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/aligned.h"
#include "runtime/thread_pool.h"
#include "runtime/tmr_abi.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <new>

namespace tmr::executor {

/// An owned array on a TMR_BUFFER_ALIGNMENT boundary. allocate() reports
/// failure instead of throwing: an executor turns it into a message.
template <typename T> struct Aligned {
  T *data = nullptr;
  size_t bytes = 0;
  Aligned() = default;
  Aligned(const Aligned &) = delete;
  Aligned &operator=(const Aligned &) = delete;
  ~Aligned() { freeAligned(data, bytes); }
  bool allocate(size_t count) {
    freeAligned(data, bytes);
    bytes = std::max<size_t>(count, 1) * sizeof(T);
    data = static_cast<T *>(allocateAligned(bytes));
    return data != nullptr;
  }
};

/// A halide_buffer_t over memory the executor owns; extents innermost first.
/// Dense, except that a `rowStride` > 0 sets the outermost (row) stride: a
/// column range of a wider buffer (a fused projection's q, k or v). Not
/// copyable: the buffer points at the view's own dimensions.
struct View {
  halide_buffer_t buffer{};
  halide_dimension_t dims[TMR_MAX_RANK]{};

  View(const void *data, halide_type_code_t code, std::initializer_list<int32_t> extents,
       int32_t rowStride = 0)
      : View(data, halide_type_t(code, 32, 1), extents, rowStride) {}
  /// Any element type (a bf16 GEMM's packed weight).
  View(const void *data, halide_type_t type, std::initializer_list<int32_t> extents,
       int32_t rowStride = 0) {
    int32_t stride = 1, i = 0;
    for (int32_t extent : extents) {
      dims[i] = halide_dimension_t(0, extent, stride);
      stride *= extent;
      ++i;
    }
    if (rowStride > 0 && i > 0)
      dims[i - 1].stride = rowStride;
    buffer.host = static_cast<uint8_t *>(const_cast<void *>(data));
    buffer.type = type;
    buffer.dimensions = i;
    buffer.dim = dims;
  }
  View(const View &) = delete;
  View &operator=(const View &) = delete;
  halide_buffer_t *get() { return &buffer; }
  /// The outermost dimension, made of extent rows from coordinate 0, now
  /// starts at coordinate `first`, which the data pointer's row holds: a
  /// cache bounded by a window (ringFirstPosition) holds positions from
  /// `first` on, and the kernel reads keys by position.
  void startAt(int32_t first) {
    halide_dimension_t &rows = dims[buffer.dimensions - 1];
    rows.min = first;
    rows.extent -= first;
  }
};

/// How a key or value cache stores its rows (kv_cache).
enum class CacheStorage { F32, F16, BF16 };

/// Writes `count` rows of `width` f32 values, `rowStride` floats apart, into
/// `cache` after the `offset` rows it holds: copied as they are, or each value
/// rounded to the nearest f16 or bf16 (ties to even), as `storage` says.
void appendCacheRows(void *cache, CacheStorage storage, int64_t width, int32_t offset,
                     const float *rows, int32_t count, int64_t rowStride);
/// appendCacheRows on the calling thread alone (the pool's tasks' part).
void appendCacheRowsSerially(void *cache, CacheStorage storage, int64_t width, int32_t offset,
                             const float *rows, int32_t count, int64_t rowStride);

/// A cache bounded by its readers' window (tmk-window-caches; `keep` rows
/// before a run's first position): a header, then `capacity` rows holding
/// consecutive positions from ringFirstPosition(cache) on. Appends the
/// run's `count` rows at position `offset`, first moving the `keep` rows
/// before it to the front when the run would not fit after them. Returns 0,
/// or 1 with a message (naming cache `name`) when the cache no longer holds
/// what the run reads: an offset behind what it moved out, or past its end.
int appendRingRows(void *cache, CacheStorage storage, int64_t width, int64_t capacity, int64_t keep,
                   int32_t offset, const float *rows, int32_t count, int64_t rowStride,
                   const char *name, char *err, size_t errLen);

/// The position a bounded cache's first row holds (appendRingRows); its
/// rows start TMR_RING_HEADER_BYTES after `cache`.
int32_t ringFirstPosition(const void *cache);

/// Runs `args` through `runChunk` with at most `chunk` tokens per sequence
/// and run (a model whose caches hold a window's rows): a longer sequence's
/// tokens in consecutive runs, their output rows where one run would write
/// them. A batch with such a sequence runs its sequences one by one.
int runInChunks(const tmr_run_args &args, const tmr_model_desc &model, int64_t chunk,
                tmr_run_fn runChunk, char *err, size_t errLen);

/// Writes printf-style `format` into `err` (`errLen` bytes) and returns 1,
/// the status of a failed run or prepare().
int fail(char *err, size_t errLen, const char *format, ...) __attribute__((format(printf, 3, 4)));

/// The failure of kernel call `call` with Halide status `code`: Halide's
/// message for it, or alone when it says that no GPU can run the kernel.
/// Returns 1.
int kernelFailed(char *err, size_t errLen, const char *call, int code);

/// A run's positions as the kernels take them (int32 scalars).
struct RunSizes {
  int32_t offset = 0;       ///< P: the sequence's tokens already in the caches
  int32_t source = 0;       ///< S: an encoder-decoder's source tokens
  int32_t sourceLength = 0; ///< SL: the source's valid (unpadded) length
};

/// Checks `args` against `model` (token counts, offset, lengths, source
/// tokens; alignment of the weights, arena and cache) and fills `sizes`.
/// Returns 0, or 1 with a message in `err`.
int checkRun(const tmr_run_args &args, const tmr_model_desc &model, RunSizes *sizes, char *err,
             size_t errLen);

/// One sequence of a run as its per-sequence calls (attention, positions,
/// cache appends) see it; a run without tmr_run_args.sequences is one.
struct SequenceRun {
  int64_t first = 0;        ///< its first row among the phase's rows
  int32_t tokens = 0;       ///< its rows
  int32_t offset = 0;       ///< P: its tokens already in its caches
  int32_t length = 0;       ///< L: its valid keys (offset + tokens unless padded)
  uint8_t *cache = nullptr; ///< its key/value caches
  int32_t source = 0;       ///< S: an encoder-decoder's source tokens
  int32_t sourceLength = 0; ///< SL: the source's valid (unpadded) length
};

/// The sequences of a run, checked (checkRun) and resolved. An
/// encoder-decoder's encode phase sees the run's new sequences (offset 0)
/// as sequences of their own: their sources' rows one after the other
/// (source(e): tokens and length are the source's).
class SequenceRuns {
public:
  /// Returns 0, or 1 with a message when out of memory.
  int open(const tmr_run_args &args, const tmr_model_desc &model, char *err, size_t errLen);
  int32_t count = 0;
  const SequenceRun &operator[](int32_t b) const { return runs.data[b]; }

  /// Encoder-decoders: the sequences whose sources this run encodes, their
  /// rows in all, and the sources' token and segment ids (null: all 0).
  int32_t encoding = 0;
  int32_t sourceRows = 0;
  const SequenceRun &source(int32_t e) const { return sources.data[e]; }
  const int32_t *sourceTokens() const { return sourceIds; }
  const int32_t *sourceSegments() const { return sourceSegmentIds; }

private:
  int openSources(const tmr_run_args &args, char *err, size_t errLen);
  Aligned<SequenceRun> runs, sources;
  Aligned<int32_t> gathered; ///< a batch's sources' ids, then their segment ids
  const int32_t *sourceIds = nullptr, *sourceSegmentIds = nullptr;
};

/// Returns 0 when `args` carries what prepare() made, else 1 with a message.
int checkPrepared(const tmr_run_args &args, char *err, size_t errLen);

/// Where a run's kernels write its output: the caller's memory (which may
/// sit anywhere), or an aligned copy that finish() hands back.
class RunOutput {
public:
  /// Returns 0, or 1 with a message when the copy cannot be allocated.
  int open(const tmr_run_args &args, const tmr_model_desc &model, char *err, size_t errLen);
  float *data() const { return output; }
  /// Copies the output to the caller's memory if the kernels wrote a copy.
  void finish() const;

private:
  Aligned<float> copy;
  float *given = nullptr, *output = nullptr;
  size_t floats = 0;
};

/// The working memory of one phase of a run (the encoder-decoder's encode,
/// or the step): the activation arena (the caller's, sized for max_seq, or
/// one of its own) and aligned copies of the T token and segment ids, which
/// default to 0 (docs/spec-language.md). Kernels may load whole aligned
/// vectors from all three.
class PhaseMemory {
public:
  /// `arenaWidth` floats per token; `segments` may be null. Returns 0, or 1
  /// with a message when out of memory.
  int allocate(float *callerArena, int64_t arenaWidth, int32_t T, const int32_t *tokens,
               const int32_t *segments, char *err, size_t errLen);
  float *arena = nullptr;
  int32_t *tokens = nullptr, *segments = nullptr;

private:
  Aligned<float> storage;
  Aligned<int32_t> ids;
};

/// Whether TMR_PROFILE (a file, or "-" for stderr) is set: kernel calls then
/// time themselves into their ProfileSlot. Unset, a call costs one
/// predictable branch on this flag.
extern const bool profiling;

/// Time spent in one call site, per phase: 0 a prompt run (T > 1), 1 a
/// decoding step (T == 1), 2 the encoder-decoder's encode phase.
struct ProfileSlot {
  const char *kernel, *op, *site;
  double ms[3];
  long long calls[3];
};

/// Times one kernel call into `slot` while profiling.
class ProfileTimer {
public:
  ProfileTimer(ProfileSlot &s, int p) {
    if (profiling) {
      slot = &s;
      phase = p;
      start = std::chrono::steady_clock::now();
    }
  }
  ~ProfileTimer() {
    if (slot)
      record(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                 .count());
  }
  ProfileTimer(const ProfileTimer &) = delete;
  ProfileTimer &operator=(const ProfileTimer &) = delete;

private:
  /// Adds the call to its slot, under a lock: a batched decoding step's
  /// sequences time their calls on several threads at once (runSequences).
  void record(double ms);
  ProfileSlot *slot = nullptr;
  int phase = 0;
  std::chrono::steady_clock::time_point start;
};

/// A sequence's calls (a generated executor's lambda, runSequences).
using SequenceBody = int (*)(void *body, int32_t b, char *err, size_t errLen);
/// Whether runSequences runs `count` sequences in parallel: a decoding step
/// (every sequence one token) of two or more, with two or more threads.
bool parallelSequences(int32_t count, bool decoding);
/// run(body, b, ...) for every b in [0, count) on the pool's threads, one
/// task each. Every sequence runs; the error is the lowest failing one's.
int runSequencesInParallel(int32_t count, SequenceBody run, void *body, char *err, size_t errLen);

/// Runs body(b, rows, err, errLen), a generated executor's calls of sequence
/// b, for every sequence of the run. A batched decoding step
/// (parallelSequences) runs them in parallel, a sequence per task, and says
/// so with `rows`: its kernels' own parallel loops then run serially, and an
/// attention takes its variant for that (`_decode_rows`, which reads each
/// cached row once for all heads). Otherwise in order, here, `rows` false,
/// stopping at the first error. A step's sequences touch disjoint rows and
/// caches: the generator runs only such calls this way.
template <typename Body>
int runSequences(int32_t count, bool decoding, Body &body, char *err, size_t errLen) {
  if (parallelSequences(count, decoding))
    return runSequencesInParallel(
        count,
        [](void *f, int32_t b, char *e, size_t n) {
          return (*static_cast<Body *>(f))(b, true, e, n);
        },
        &body, err, errLen);
  for (int32_t b = 0; b < count; ++b)
    if (int rc = body(b, false, err, errLen))
      return rc;
  return 0;
}

/// One executor's call sites, written to TMR_PROFILE as JSON at exit. A
/// multi-ISA executable links one executor per variant: only the one the
/// dispatcher selected (select()) writes its profile.
class ProfileTable {
public:
  constexpr ProfileTable(ProfileSlot *slots, int count, bool selected)
      : slots(slots), count(count), selected(selected) {}
  ~ProfileTable();
  ProfileTable(const ProfileTable &) = delete;
  ProfileTable &operator=(const ProfileTable &) = delete;
  void select();
  /// Forgets the calls timed so far (resetProfile()).
  void reset();

private:
  ProfileSlot *slots;
  int count;
  bool selected;
};

/// Zeroes the selected executor's profile, if any: `--bench` calls it before
/// its timed runs, so that TMR_PROFILE holds those alone, not the first
/// runs whose kernels fault in the arena's pages (2 MB huge pages zeroed on
/// first touch: a norm that first writes a region paid ~1 ms once, five
/// times its steady time when averaged over 20 runs).
void resetProfile();

} // namespace tmr::executor
