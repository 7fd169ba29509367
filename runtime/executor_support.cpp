//===- executor_support.cpp - What every generated executor calls ---------===//

#include "runtime/executor_support.h"

#include "runtime/aligned.h"
#include "runtime/half.h"
#include "runtime/thread_pool.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>

namespace tmr::executor {

namespace {

const char *const profilePath = std::getenv("TMR_PROFILE");

void writeJsonString(std::FILE *out, const char *text) {
  std::fputc('"', out);
  for (; *text; ++text) {
    if (*text == '"' || *text == '\\')
      std::fputc('\\', out);
    std::fputc(*text, out);
  }
  std::fputc('"', out);
}

/// One entry per call site and phase that ran, in call order.
void writeProfile(const ProfileSlot *slots, int count) {
  std::FILE *out = std::strcmp(profilePath, "-") == 0 ? stderr : std::fopen(profilePath, "w");
  if (!out) {
    std::fprintf(stderr, "warning: TMR_PROFILE: cannot write %s\n", profilePath);
    return;
  }
  static const char *const phases[] = {"prompt", "step", "encode"};
  std::fprintf(out, "[");
  bool first = true;
  for (int i = 0; i < count; ++i)
    for (int p = 0; p < 3; ++p) {
      if (!slots[i].calls[p])
        continue;
      std::fprintf(out, "%s\n  {\"call\": %d, \"kernel\": ", first ? "" : ",", i);
      writeJsonString(out, slots[i].kernel);
      std::fprintf(out, ", \"op\": ");
      writeJsonString(out, slots[i].op);
      std::fprintf(out, ", \"site\": ");
      writeJsonString(out, slots[i].site);
      std::fprintf(out, ", \"phase\": \"%s\", \"calls\": %lld, \"ms\": %.6f}", phases[p],
                   slots[i].calls[p], slots[i].ms[p]);
      first = false;
    }
  std::fprintf(out, "\n]\n");
  if (out != stderr)
    std::fclose(out);
}

/// checkRun's checks of a batched run's sequences.
int checkSequences(const tmr_run_args &args, const tmr_model_desc &model, char *err,
                   size_t errLen) {
  const int32_t batch = model.max_batch > 1 ? model.max_batch : 1;
  if (!args.sequences)
    return fail(err, errLen, "num_sequences is %d but sequences is NULL", args.num_sequences);
  if (args.num_sequences < 1 || args.num_sequences > batch)
    return batch == 1
               ? fail(err, errLen,
                      "num_sequences %d: this model runs one sequence at a time (its "
                      "max_batch is 1)",
                      args.num_sequences)
               : fail(err, errLen, "num_sequences %d: this model runs 1 to %d sequences at once",
                      args.num_sequences, batch);
  int64_t rows = 0;
  for (int32_t b = 0; b < args.num_sequences; ++b) {
    const tmr_sequence_run &s = args.sequences[b];
    if (s.num_tokens < 1 || s.offset < 0 || s.offset + s.num_tokens > model.max_seq)
      return fail(err, errLen,
                  "sequence %d: %lld tokens after %lld cached ones: this model accepts 1 to %lld "
                  "in all",
                  b, static_cast<long long>(s.num_tokens), static_cast<long long>(s.offset),
                  static_cast<long long>(model.max_seq));
    if (model.cache_bytes == 0 && s.offset != 0)
      return fail(err, errLen, "sequence %d: this model keeps no cache: offset must be 0", b);
    // An encoder-decoder's length is its source's (tmr_sequence_run).
    const int64_t input = model.encoder_decoder ? s.num_source_tokens : s.num_tokens;
    if (model.encoder_decoder && (s.num_source_tokens < 1 || s.num_source_tokens > model.max_seq ||
                                  (s.offset == 0 && !s.source_tokens)))
      return fail(
          err, errLen,
          "sequence %d: this encoder-decoder model needs 1 to %lld source tokens, %lld "
          "given",
          b, static_cast<long long>(model.max_seq),
          static_cast<long long>(s.source_tokens || s.offset > 0 ? s.num_source_tokens : 0));
    if (s.length < 0 || s.length > input)
      return fail(err, errLen, "sequence %d: length %lld is outside [1, %lld]", b,
                  static_cast<long long>(s.length), static_cast<long long>(input));
    if (model.cache_bytes > 0 && !isAligned(s.cache))
      return fail(err, errLen, "sequence %d: its cache is not aligned to %d bytes", b,
                  TMR_BUFFER_ALIGNMENT);
    rows += s.num_tokens;
  }
  if (rows != args.num_tokens)
    return fail(err, errLen, "num_tokens is %lld, the sequences hold %lld",
                static_cast<long long>(args.num_tokens), static_cast<long long>(rows));
  return 0;
}

/// The token, offset and length checks of checkRun.
int checkPositions(const tmr_run_args &args, const tmr_model_desc &model, RunSizes *sizes,
                   char *err, size_t errLen) {
  if (args.num_tokens < 1 || args.offset < 0 || args.offset + args.num_tokens > model.max_seq)
    return fail(err, errLen, "%lld tokens after %lld cached ones: this model accepts 1 to %lld in all",
                static_cast<long long>(args.num_tokens), static_cast<long long>(args.offset),
                static_cast<long long>(model.max_seq));
  sizes->offset = static_cast<int32_t>(args.offset);
  if (model.cache_bytes == 0 && sizes->offset != 0)
    return fail(err, errLen, "this model keeps no cache: offset must be 0");
  if (!model.encoder_decoder) {
    if (args.length < 0 || args.length > args.num_tokens)
      return fail(err, errLen, "length %lld is outside [1, %lld]",
                  static_cast<long long>(args.length), static_cast<long long>(args.num_tokens));
    return 0;
  }
  sizes->source = static_cast<int32_t>(args.num_source_tokens);
  if (args.num_source_tokens < 1 || args.num_source_tokens > model.max_seq ||
      (sizes->offset == 0 && !args.source_tokens))
    return fail(err, errLen, "this encoder-decoder model needs 1 to %lld source tokens, %lld given",
                static_cast<long long>(model.max_seq),
                static_cast<long long>(args.num_source_tokens));
  sizes->sourceLength = args.length > 0 ? static_cast<int32_t>(args.length) : sizes->source;
  if (sizes->sourceLength > sizes->source)
    return fail(err, errLen, "length %d exceeds the source's %d tokens", sizes->sourceLength,
                sizes->source);
  return 0;
}

} // namespace

const bool profiling = profilePath && profilePath[0];

namespace {

/// One call's rows, for the pool's tasks (appendCacheRows).
struct AppendJob {
  void *cache;
  CacheStorage storage;
  int64_t width;
  int32_t offset;
  const float *rows;
  int32_t count;
  int64_t rowStride;
};

/// Rows of a prompt's append that one task copies.
constexpr int32_t kAppendRowsPerTask = 16;

int appendRowsTask(void *, int task, uint8_t *closure) {
  const AppendJob &job = *reinterpret_cast<const AppendJob *>(closure);
  const int32_t first = task * kAppendRowsPerTask;
  const int32_t count = std::min(kAppendRowsPerTask, job.count - first);
  appendCacheRowsSerially(job.cache, job.storage, job.width, job.offset + first,
                          job.rows +
                              static_cast<size_t>(first) * static_cast<size_t>(job.rowStride),
                          count, job.rowStride);
  return 0;
}

} // namespace

void appendCacheRows(void *cache, CacheStorage storage, int64_t width, int32_t offset,
                     const float *rows, int32_t count, int64_t rowStride) {
  // A prompt's rows go to the thread pool in tasks of kAppendRowsPerTask
  // rows when they hold kPoolMinValues or more (the row-wise kernels'
  // bound). The kernels before it wrote those rows on every
  // thread; copied on one, they all crossed to its core. A d-128 decoder's
  // (8 layers, 2 threads, 128-token prompt) appends took 0.049-0.057 ms a
  // prompt against 0.065-0.067 (Zen 4, 8 interleaved rounds). A decoding
  // step's row, and a batched step's few, stay on the caller.
  if (count * width >= kPoolMinValues && count > kAppendRowsPerTask) {
    AppendJob job{cache, storage, width, offset, rows, count, rowStride};
    poolParallelFor(nullptr, appendRowsTask, 0,
                    (count + kAppendRowsPerTask - 1) / kAppendRowsPerTask,
                    reinterpret_cast<uint8_t *>(&job));
    return;
  }
  appendCacheRowsSerially(cache, storage, width, offset, rows, count, rowStride);
}

void appendCacheRowsSerially(void *cache, CacheStorage storage, int64_t width, int32_t offset,
                             const float *rows, int32_t count, int64_t rowStride) {
  const size_t first = static_cast<size_t>(offset) * static_cast<size_t>(width);
  for (int32_t r = 0; r < count; ++r) {
    const float *row = rows + static_cast<size_t>(r) * static_cast<size_t>(rowStride);
    const size_t at = first + static_cast<size_t>(r) * static_cast<size_t>(width);
    switch (storage) {
    case CacheStorage::F32:
      std::memcpy(static_cast<float *>(cache) + at, row,
                  sizeof(float) * static_cast<size_t>(width));
      break;
    case CacheStorage::F16:
      narrowToHalf(row, static_cast<uint16_t *>(cache) + at, static_cast<size_t>(width));
      break;
    case CacheStorage::BF16: {
      uint16_t *out = static_cast<uint16_t *>(cache) + at;
      for (int64_t c = 0; c < width; ++c)
        out[c] = floatToBfloat16(row[c]);
      break;
    }
    }
  }
}

void ProfileTimer::record(double ms) {
  static std::mutex lock;
  std::lock_guard<std::mutex> hold(lock);
  slot->ms[phase] += ms;
  ++slot->calls[phase];
}

bool parallelSequences(int32_t count, bool decoding) {
  return decoding && count > 1 && poolThreads() > 1;
}

int runSequencesInParallel(int32_t count, SequenceBody run, void *body, char *err, size_t errLen) {
  struct Tasks {
    SequenceBody run;
    void *body;
    std::mutex lock;
    int32_t failed = std::numeric_limits<int32_t>::max();
    int rc = 0;
    char message[1024] = "";
  } tasks{run, body};
  halide_task_t task = [](void *, int b, uint8_t *closure) -> int {
    Tasks &t = *reinterpret_cast<Tasks *>(closure);
    // Halide's message is per thread (halide_error.cpp): a worker's may be
    // an earlier run's.
    tmr_halide_error_clear();
    char message[sizeof t.message] = "";
    if (int rc = t.run(t.body, b, message, sizeof message)) {
      std::lock_guard<std::mutex> hold(t.lock);
      if (b < t.failed) {
        t.failed = b;
        t.rc = rc;
        std::memcpy(t.message, message, sizeof message);
      }
    }
    return 0;
  };
  poolParallelFor(nullptr, task, 0, count, reinterpret_cast<uint8_t *>(&tasks));
  if (tasks.rc == 0)
    return 0;
  std::snprintf(err, errLen, "%s", tasks.message);
  return tasks.rc;
}

int fail(char *err, size_t errLen, const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(err, errLen, format, args);
  va_end(args);
  return 1;
}

int kernelFailed(char *err, size_t errLen, const char *call, int code) {
  // A missing GPU is not the kernel's fault: its message stands alone.
  const char *message = tmr_halide_error_message();
  if (std::strstr(message, "this executable was compiled for CUDA"))
    return fail(err, errLen, "%s", message);
  return fail(err, errLen, "kernel %s failed (Halide error %d): %s", call, code,
              message[0] ? message : "no message");
}

int checkRun(const tmr_run_args &args, const tmr_model_desc &model, RunSizes *sizes, char *err,
             size_t errLen) {
  if (args.num_sequences != 0) {
    if (int rc = checkSequences(args, model, err, errLen))
      return rc;
  } else if (int rc = checkPositions(args, model, sizes, err, errLen)) {
    return rc;
  }
  for (int32_t w = 0; w < model.num_tensors; ++w)
    if (!isAligned(args.weights[w]))
      return fail(err, errLen, "weight '%s' is not aligned to %d bytes", model.tensors[w].name,
                  TMR_BUFFER_ALIGNMENT);
  if (args.arena && !isAligned(args.arena))
    return fail(err, errLen, "the arena is not aligned to %d bytes", TMR_BUFFER_ALIGNMENT);
  if (model.cache_bytes > 0 && args.num_sequences == 0 && !isAligned(args.cache))
    return fail(err, errLen, "the cache is not aligned to %d bytes", TMR_BUFFER_ALIGNMENT);
  if (args.last_row_only != 0 && args.last_row_only != 1)
    return fail(err, errLen, "last_row_only is %d: 0 or 1", args.last_row_only);
  if (args.last_row_only && model.output_rows != 0)
    return fail(err, errLen,
                "last_row_only: this model's output is %lld row(s) whatever the tokens, not one "
                "per token",
                static_cast<long long>(model.output_rows));
  return 0;
}

int SequenceRuns::open(const tmr_run_args &args, const tmr_model_desc &model, char *err,
                       size_t errLen) {
  count = args.num_sequences > 0 ? args.num_sequences : 1;
  if (!runs.allocate(static_cast<size_t>(count)))
    return fail(err, errLen, "out of memory for the run's sequences");
  std::fill(runs.data, runs.data + count, SequenceRun{}); // allocate() leaves them raw
  // An encoder-decoder's length is its source's: its decoder sees every key.
  auto resolve = [&](SequenceRun &s, int64_t tokens, int64_t offset, int64_t length, void *cache,
                     int64_t source) {
    s.tokens = static_cast<int32_t>(tokens);
    s.offset = static_cast<int32_t>(offset);
    s.length =
        !model.encoder_decoder && length > 0 ? static_cast<int32_t>(length) : s.offset + s.tokens;
    s.cache = static_cast<uint8_t *>(cache);
    if (model.encoder_decoder) {
      s.source = static_cast<int32_t>(source);
      s.sourceLength = length > 0 ? static_cast<int32_t>(length) : s.source;
    }
  };
  if (args.num_sequences == 0) {
    resolve(runs.data[0], args.num_tokens, args.offset, args.length, args.cache,
            args.num_source_tokens);
  } else {
    int64_t first = 0;
    for (int32_t b = 0; b < count; ++b) {
      const tmr_sequence_run &given = args.sequences[b];
      runs.data[b].first = first;
      resolve(runs.data[b], given.num_tokens, given.offset, given.length, given.cache,
              given.num_source_tokens);
      first += given.num_tokens;
    }
  }
  return model.encoder_decoder ? openSources(args, err, errLen) : 0;
}

int SequenceRuns::openSources(const tmr_run_args &args, char *err, size_t errLen) {
  for (int32_t b = 0; b < count; ++b)
    if (runs.data[b].offset == 0) {
      ++encoding;
      sourceRows += runs.data[b].source;
    }
  if (encoding == 0) // decoding steps: no encode phase
    return 0;
  if (!sources.allocate(static_cast<size_t>(encoding)))
    return fail(err, errLen, "out of memory for the run's sources");
  // In its encode phase a sequence's rows are its source's.
  int32_t e = 0, first = 0;
  for (int32_t b = 0; b < count; ++b) {
    const SequenceRun &s = runs.data[b];
    if (s.offset != 0)
      continue;
    SequenceRun &encoded = sources.data[e++];
    encoded = s;
    encoded.first = first;
    encoded.tokens = s.source;
    encoded.length = s.sourceLength;
    first += s.source;
  }
  if (args.num_sequences == 0) {
    sourceIds = args.source_tokens;
    sourceSegmentIds = args.segments;
    return 0;
  }
  // A batch's sources are separate arrays: gathered into the phase's rows.
  bool anySegments = false;
  for (int32_t b = 0; b < count; ++b)
    anySegments =
        anySegments || (args.sequences[b].offset == 0 && args.sequences[b].source_segments);
  if (!gathered.allocate(static_cast<size_t>(sourceRows) * (anySegments ? 2 : 1)))
    return fail(err, errLen, "out of memory for the run's sources");
  int32_t *ids = gathered.data, *segmentIds = anySegments ? gathered.data + sourceRows : nullptr;
  for (int32_t b = 0; b < count; ++b) {
    const tmr_sequence_run &given = args.sequences[b];
    if (given.offset != 0)
      continue;
    const size_t n = static_cast<size_t>(given.num_source_tokens);
    std::memcpy(ids, given.source_tokens, n * sizeof(int32_t));
    if (segmentIds) {
      if (given.source_segments)
        std::memcpy(segmentIds, given.source_segments, n * sizeof(int32_t));
      else
        std::fill(segmentIds, segmentIds + n, 0);
      segmentIds += n;
    }
    ids += n;
  }
  sourceIds = gathered.data;
  sourceSegmentIds = anySegments ? gathered.data + sourceRows : nullptr;
  return 0;
}

int checkPrepared(const tmr_run_args &args, char *err, size_t errLen) {
  if (!args.prepared)
    return fail(err, errLen, "the weights were not prepared (call prepare() first)");
  return 0;
}

int RunOutput::open(const tmr_run_args &args, const tmr_model_desc &model, char *err,
                    size_t errLen) {
  floats = static_cast<size_t>(tmr_output_rows(&model, &args)) * model.output_width;
  given = output = args.output;
  if (isAligned(output))
    return 0;
  if (!copy.allocate(floats))
    return fail(err, errLen, "out of memory for the output");
  output = copy.data;
  return 0;
}

void RunOutput::finish() const {
  if (output != given)
    std::memcpy(given, output, sizeof(float) * floats);
}

int PhaseMemory::allocate(float *callerArena, int64_t arenaWidth, int32_t T,
                          const int32_t *givenTokens, const int32_t *givenSegments, char *err,
                          size_t errLen) {
  arena = callerArena;
  if ((!arena && !storage.allocate(static_cast<size_t>(arenaWidth) * T)) ||
      !ids.allocate(2 * static_cast<size_t>(T)))
    return fail(err, errLen, "out of memory for the activation arena");
  if (!arena)
    arena = storage.data;
  tokens = ids.data;
  segments = ids.data + T;
  std::memcpy(tokens, givenTokens, sizeof(int32_t) * T);
  for (int32_t t = 0; t < T; ++t)
    segments[t] = givenSegments ? givenSegments[t] : 0;
  return 0;
}

namespace {
/// The table of the executor the dispatcher selected (select()).
ProfileTable *selectedTable = nullptr;
} // namespace

void ProfileTable::select() {
  selected = true;
  selectedTable = this;
}

void ProfileTable::reset() {
  for (int i = 0; i < count; ++i)
    for (int p = 0; p < 3; ++p) {
      slots[i].ms[p] = 0;
      slots[i].calls[p] = 0;
    }
}

void resetProfile() {
  if (selectedTable)
    selectedTable->reset();
}

ProfileTable::~ProfileTable() {
  if (profiling && selected)
    writeProfile(slots, count);
}

} // namespace tmr::executor
