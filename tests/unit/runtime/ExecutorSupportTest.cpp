//===- ExecutorSupportTest.cpp - The fixed part of every executor ---------===//
//
// runtime/executor_support.h: the checks, memory and views a generated
// executor's run() calls. The e2e suite runs them inside compiled models;
// these tests reach the cases a valid model run never does.
//
//===----------------------------------------------------------------------===//

#include "runtime/executor_support.h"

#include "runtime/aligned.h"
#include "runtime/half.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace tmr::executor;

const tmr_tensor_desc kTensors[] = {{"embed.tokens", 2, {10, 8}, TMR_F32}};

/// A decoder (it keeps a cache) of max_seq 16, one weight, 8 output floats per token.
tmr_model_desc decoder() {
  tmr_model_desc model{};
  model.abi_version = TMR_ABI_VERSION;
  model.max_seq = 16;
  model.output_width = 8;
  model.cache_bytes = 64 * sizeof(float);
  model.num_tensors = 1;
  model.tensors = kTensors;
  return model;
}

struct RunArgs {
  tmr::AlignedVector<float> weight = tmr::AlignedVector<float>(80);
  tmr::AlignedVector<float> cache = tmr::AlignedVector<float>(64);
  const void *weights[1] = {weight.data()};
  int32_t tokens[4] = {1, 2, 3, 4};
  tmr_run_args args{};
  RunArgs() {
    args.weights = weights;
    args.tokens = tokens;
    args.num_tokens = 4;
    args.cache = cache.data();
  }
};

/// checkRun's message for `args` (empty when it accepts them).
std::string check(const tmr_run_args &args, const tmr_model_desc &model,
                  RunSizes *sizes = nullptr) {
  RunSizes ignored;
  char err[256] = "";
  int rc = checkRun(args, model, sizes ? sizes : &ignored, err, sizeof err);
  EXPECT_EQ(rc, err[0] ? 1 : 0);
  return err;
}

TEST(ExecutorSupport, ChecksTokenCountsOffsetAndLength) {
  RunArgs run;
  tmr_model_desc model = decoder();
  RunSizes sizes;
  EXPECT_EQ(check(run.args, model, &sizes), "");
  EXPECT_EQ(sizes.offset, 0);
  run.args.offset = 13;
  EXPECT_EQ(check(run.args, model), "4 tokens after 13 cached ones: this model accepts 1 to 16 "
                                    "in all");
  run.args.offset = 12;
  EXPECT_EQ(check(run.args, model, &sizes), "");
  EXPECT_EQ(sizes.offset, 12);
  run.args.length = 5;
  EXPECT_EQ(check(run.args, model), "length 5 is outside [1, 4]");
  model.cache_bytes = 0;
  run.args.length = 0;
  EXPECT_EQ(check(run.args, model), "this model keeps no cache: offset must be 0");
}

TEST(ExecutorSupport, ChecksAndResolvesABatchsSequences) {
  RunArgs run;
  tmr_model_desc model = decoder();
  model.max_batch = 3;
  tmr::AlignedVector<float> second(64);
  // Rows 0..2 are the first sequence's (after 5 cached), row 3 the second's.
  tmr_sequence_run sequences[2] = {{3, 5, 0, run.cache.data()}, {1, 0, 0, second.data()}};
  run.args.num_sequences = 2;
  run.args.sequences = sequences;
  EXPECT_EQ(check(run.args, model), "");
  SequenceRuns runs;
  char err[256] = "";
  ASSERT_EQ(runs.open(run.args, model, err, sizeof err), 0) << err;
  ASSERT_EQ(runs.count, 2);
  EXPECT_EQ(runs[0].first, 0);
  EXPECT_EQ(runs[0].tokens, 3);
  EXPECT_EQ(runs[0].offset, 5);
  EXPECT_EQ(runs[0].length, 8); // every key: offset + tokens
  EXPECT_EQ(runs[1].first, 3);
  EXPECT_EQ(runs[1].cache, reinterpret_cast<uint8_t *>(second.data()));

  sequences[1].num_tokens = 2;
  EXPECT_EQ(check(run.args, model), "num_tokens is 4, the sequences hold 5");
  sequences[1] = {1, 16, 0, second.data()};
  EXPECT_EQ(check(run.args, model),
            "sequence 1: 1 tokens after 16 cached ones: this model accepts 1 to 16 in all");
  sequences[1] = {1, 0, 2, second.data()};
  EXPECT_EQ(check(run.args, model), "sequence 1: length 2 is outside [1, 1]");
  sequences[1] = {1, 0, 0, reinterpret_cast<uint8_t *>(second.data()) + 4};
  EXPECT_EQ(check(run.args, model), "sequence 1: its cache is not aligned to 128 bytes");
  sequences[1] = {1, 0, 0, second.data()};
  run.args.num_sequences = 4;
  EXPECT_EQ(check(run.args, model), "num_sequences 4: this model runs 1 to 3 sequences at once");
  model.max_batch = 1; // a model that does not batch takes one sequence a call
  run.args.num_sequences = 2;
  EXPECT_EQ(check(run.args, model),
            "num_sequences 2: this model runs one sequence at a time (its max_batch is 1)");
}

TEST(ExecutorSupport, GathersTheSourcesAnEncoderDecodersNewSequencesEncode) {
  RunArgs run;
  tmr_model_desc model = decoder();
  model.max_batch = 3;
  model.encoder_decoder = 1;
  tmr::AlignedVector<float> second(64), third(64);
  const int32_t first[5] = {1, 2, 3, 4, 5}, last[2] = {8, 9}, labels[5] = {1, 1, 0, 1, 1};
  // A new sequence (5 source tokens, 3 valid, segments), one stepping after
  // 1 cached token (its source of 6 encoded before), a new one of 2.
  tmr_sequence_run sequences[3] = {{2, 0, 3, run.cache.data(), first, labels, 5},
                                   {1, 1, 0, second.data(), nullptr, nullptr, 6},
                                   {1, 0, 0, third.data(), last, nullptr, 2}};
  run.args.num_sequences = 3;
  run.args.sequences = sequences;
  EXPECT_EQ(check(run.args, model), "");
  SequenceRuns runs;
  char err[256] = "";
  ASSERT_EQ(runs.open(run.args, model, err, sizeof err), 0) << err;
  ASSERT_EQ(runs.count, 3);
  EXPECT_EQ(runs[0].length, 2); // the decoder sees every key
  EXPECT_EQ(runs[0].sourceLength, 3);
  EXPECT_EQ(runs[1].source, 6);
  EXPECT_EQ(runs[1].sourceLength, 6);
  ASSERT_EQ(runs.encoding, 2);
  EXPECT_EQ(runs.sourceRows, 7);
  EXPECT_EQ(runs.source(0).first, 0);
  EXPECT_EQ(runs.source(0).tokens, 5);
  EXPECT_EQ(runs.source(0).length, 3);
  EXPECT_EQ(runs.source(0).offset, 0);
  EXPECT_EQ(runs.source(1).first, 5);
  EXPECT_EQ(runs.source(1).tokens, 2);
  EXPECT_EQ(runs.source(1).length, 2);
  EXPECT_EQ(runs.source(1).cache, reinterpret_cast<uint8_t *>(third.data()));
  EXPECT_EQ(std::vector<int32_t>(runs.sourceTokens(), runs.sourceTokens() + 7),
            (std::vector<int32_t>{1, 2, 3, 4, 5, 8, 9}));
  ASSERT_NE(runs.sourceSegments(), nullptr);
  EXPECT_EQ(std::vector<int32_t>(runs.sourceSegments(), runs.sourceSegments() + 7),
            (std::vector<int32_t>{1, 1, 0, 1, 1, 0, 0}));

  sequences[2].source_tokens = nullptr;
  EXPECT_EQ(check(run.args, model),
            "sequence 2: this encoder-decoder model needs 1 to 16 source tokens, 0 given");
  sequences[2].source_tokens = last;
  sequences[0].length = 6;
  EXPECT_EQ(check(run.args, model), "sequence 0: length 6 is outside [1, 5]");
}

TEST(ExecutorSupport, ResolvesASingleRunAsOneSequence) {
  RunArgs run;
  tmr_model_desc model = decoder();
  run.args.offset = 2;
  run.args.length = 3;
  SequenceRuns runs;
  char err[256] = "";
  ASSERT_EQ(runs.open(run.args, model, err, sizeof err), 0) << err;
  ASSERT_EQ(runs.count, 1);
  EXPECT_EQ(runs[0].first, 0);
  EXPECT_EQ(runs[0].tokens, 4);
  EXPECT_EQ(runs[0].offset, 2);
  EXPECT_EQ(runs[0].length, 3);
  // An encoder-decoder's length is its source's: its decoder sees every key.
  model.encoder_decoder = 1;
  ASSERT_EQ(runs.open(run.args, model, err, sizeof err), 0) << err;
  EXPECT_EQ(runs[0].length, 6);
}

TEST(ExecutorSupport, ChecksAnEncoderDecodersSource) {
  RunArgs run;
  tmr_model_desc model = decoder();
  model.encoder_decoder = 1;
  int32_t source[6] = {5, 6, 7, 8, 9, 10};
  EXPECT_EQ(check(run.args, model),
            "this encoder-decoder model needs 1 to 16 source tokens, 0 given");
  run.args.num_source_tokens = 6;
  EXPECT_EQ(check(run.args, model),
            "this encoder-decoder model needs 1 to 16 source tokens, 6 given");
  run.args.source_tokens = source;
  RunSizes sizes;
  EXPECT_EQ(check(run.args, model, &sizes), "");
  EXPECT_EQ(sizes.source, 6);
  EXPECT_EQ(sizes.sourceLength, 6);
  run.args.length = 4;
  EXPECT_EQ(check(run.args, model, &sizes), "");
  EXPECT_EQ(sizes.sourceLength, 4);
  run.args.length = 7;
  EXPECT_EQ(check(run.args, model), "length 7 exceeds the source's 6 tokens");
  // Later runs of a sequence read the encoded source from the caches.
  run.args.length = 0;
  run.args.source_tokens = nullptr;
  run.args.offset = 4;
  EXPECT_EQ(check(run.args, model), "");
}

TEST(ExecutorSupport, ChecksAlignment) {
  RunArgs run;
  tmr_model_desc model = decoder();
  run.weights[0] = run.weight.data() + 1;
  EXPECT_EQ(check(run.args, model), "weight 'embed.tokens' is not aligned to 128 bytes");
  run.weights[0] = run.weight.data();
  std::vector<float> arena(1000);
  run.args.arena = tmr::isAligned(arena.data()) ? arena.data() + 1 : arena.data();
  EXPECT_EQ(check(run.args, model), "the arena is not aligned to 128 bytes");
  run.args.arena = nullptr;
  run.args.cache = run.cache.data() + 1;
  EXPECT_EQ(check(run.args, model), "the cache is not aligned to 128 bytes");
  model.cache_bytes = 0;
  EXPECT_EQ(check(run.args, model), "");
}

TEST(ExecutorSupport, LastRowOnlyIsAFlagOfPerTokenOutputs) {
  RunArgs run;
  tmr_model_desc model = decoder();
  run.args.last_row_only = 1;
  EXPECT_EQ(check(run.args, model), "");
  run.args.last_row_only = 2;
  EXPECT_EQ(check(run.args, model), "last_row_only is 2: 0 or 1");
  run.args.last_row_only = 1;
  model.output_rows = 1; // a classifier: one row whatever the tokens
  EXPECT_EQ(check(run.args, model), "last_row_only: this model's output is 1 row(s) whatever "
                                    "the tokens, not one per token");
}

TEST(ExecutorSupport, ALastRowOnlyOutputIsOneRow) {
  RunArgs run;
  tmr_model_desc model = decoder();
  tmr::AlignedVector<float> memory(8 + 1, -1.0f);
  char err[128] = "";
  run.args.last_row_only = 1;
  run.args.output = memory.data() + 1; // misaligned: the copy is sized for one row
  RunOutput output;
  ASSERT_EQ(output.open(run.args, model, err, sizeof err), 0);
  for (int i = 0; i < 8; ++i)
    output.data()[i] = static_cast<float>(i + 1);
  output.finish();
  EXPECT_EQ(memory[0], -1.0f);
  EXPECT_EQ(memory[8], 8.0f);
}

TEST(ExecutorSupport, ChecksPrepared) {
  RunArgs run;
  char err[128] = "";
  EXPECT_EQ(checkPrepared(run.args, err, sizeof err), 1);
  EXPECT_STREQ(err, "the weights were not prepared (call prepare() first)");
  run.args.prepared = &run;
  EXPECT_EQ(checkPrepared(run.args, err, sizeof err), 0);
}

TEST(ExecutorSupport, AMisalignedOutputIsWrittenThroughAnAlignedCopy) {
  RunArgs run;
  tmr_model_desc model = decoder();
  tmr::AlignedVector<float> memory(4 * 8 + 1, -1.0f);
  char err[128] = "";
  for (float *given : {memory.data(), memory.data() + 1}) {
    run.args.output = given;
    RunOutput output;
    ASSERT_EQ(output.open(run.args, model, err, sizeof err), 0);
    EXPECT_TRUE(tmr::isAligned(output.data()));
    EXPECT_EQ(output.data() == given, given == memory.data());
    for (int i = 0; i < 4 * 8; ++i)
      output.data()[i] = static_cast<float>(i);
    output.finish();
    EXPECT_EQ(given[0], 0.0f);
    EXPECT_EQ(given[31], 31.0f);
  }
}

TEST(ExecutorSupport, PhaseMemoryCopiesIdsAndDefaultsSegmentsToZero) {
  char err[128] = "";
  int32_t tokens[3] = {7, 8, 9}, segments[3] = {1, 0, 1};
  PhaseMemory own;
  ASSERT_EQ(own.allocate(nullptr, 10, 3, tokens, nullptr, err, sizeof err), 0);
  EXPECT_TRUE(tmr::isAligned(own.arena));
  EXPECT_TRUE(tmr::isAligned(own.tokens));
  EXPECT_EQ(std::vector<int32_t>(own.tokens, own.tokens + 3), std::vector<int32_t>({7, 8, 9}));
  EXPECT_EQ(std::vector<int32_t>(own.segments, own.segments + 3),
            std::vector<int32_t>({0, 0, 0}));
  tmr::AlignedVector<float> arena(30);
  PhaseMemory callers;
  ASSERT_EQ(callers.allocate(arena.data(), 10, 3, tokens, segments, err, sizeof err), 0);
  EXPECT_EQ(callers.arena, arena.data());
  EXPECT_EQ(std::vector<int32_t>(callers.segments, callers.segments + 3),
            std::vector<int32_t>({1, 0, 1}));
}

TEST(ExecutorSupport, ViewsAreDenseOrRowStrided) {
  float data[24];
  View dense(data, halide_type_float, {4, 6});
  EXPECT_EQ(dense.get()->dimensions, 2);
  EXPECT_EQ(dense.get()->dim[1].stride, 4);
  EXPECT_EQ(dense.get()->dim[1].extent, 6);
  // The middle 4 columns of rows 12 floats apart.
  View columns(data + 4, halide_type_float, {4, 2}, 12);
  EXPECT_EQ(columns.get()->dim[0].stride, 1);
  EXPECT_EQ(columns.get()->dim[1].stride, 12);
  EXPECT_EQ(columns.get()->host, reinterpret_cast<uint8_t *>(data + 4));
  EXPECT_EQ(columns.get()->type, halide_type_t(halide_type_float, 32));
}

TEST(ExecutorSupport, AFailedKernelSaysWhichAndWhy) {
  char err[256] = "";
  tmr_halide_error_clear();
  EXPECT_EQ(kernelFailed(err, sizeof err, "tm.linear (model.tm:3:5)", -3), 1);
  EXPECT_STREQ(err, "kernel tm.linear (model.tm:3:5) failed (Halide error -3): no message");
  halide_error(nullptr, "Error: CUDA API not found: cuInit\n");
  kernelFailed(err, sizeof err, "tm.linear (model.tm:3:5)", -1);
  EXPECT_EQ(std::string(err).rfind("this executable was compiled for CUDA", 0), 0u) << err;
  tmr_halide_error_clear();
}

// runSequences: a decoding step's sequences run in parallel, one task each
// (rows = true), every one of them even when some fail, and the error is the
// lowest failing sequence's whichever thread ran it; a prompt run's (and a
// single sequence's) in order on the caller's thread, up to the first error.
TEST(ExecutorSupport, RunsADecodingStepsSequencesInParallel) {
  const int poolThreads = tmr::poolThreads();
  tmr::setPoolThreads(2);
  std::vector<std::atomic<int>> visits(64);
  std::atomic<int> parallelRows{0};
  std::mutex lock;
  std::set<std::thread::id> threads;
  auto body = [&](int32_t b, bool rows, char *err, size_t errLen) -> int {
    visits[static_cast<size_t>(b)].fetch_add(1);
    parallelRows.fetch_add(rows ? 1 : 0);
    {
      std::lock_guard<std::mutex> hold(lock);
      threads.insert(std::this_thread::get_id());
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (b == 40 || b == 13 || b == 50)
      return fail(err, errLen, "sequence %d failed", b);
    return 0;
  };
  char err[256] = "";
  EXPECT_TRUE(parallelSequences(64, true));
  EXPECT_EQ(runSequences(64, true, body, err, sizeof err), 1);
  EXPECT_STREQ(err, "sequence 13 failed");
  for (const std::atomic<int> &v : visits)
    EXPECT_EQ(v.load(), 1);
  EXPECT_EQ(parallelRows.load(), 64);
  // Which tasks the second thread takes is up to the scheduler.
  EXPECT_LE(threads.size(), 2u);

  // Not a decoding step: in order, here, stopping at sequence 13.
  for (std::atomic<int> &v : visits)
    v.store(0);
  parallelRows.store(0);
  threads.clear();
  EXPECT_FALSE(parallelSequences(64, false));
  EXPECT_EQ(runSequences(64, false, body, err, sizeof err), 1);
  EXPECT_STREQ(err, "sequence 13 failed");
  for (size_t b = 0; b < visits.size(); ++b)
    EXPECT_EQ(visits[b].load(), b <= 13 ? 1 : 0) << b;
  EXPECT_EQ(parallelRows.load(), 0);
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});

  // One sequence, or one thread: in order too.
  EXPECT_FALSE(parallelSequences(1, true));
  tmr::setPoolThreads(1);
  EXPECT_FALSE(parallelSequences(64, true));
  EXPECT_EQ(runSequences(2, true, body, err, sizeof err), 0);
  EXPECT_EQ(parallelRows.load(), 0);
  tmr::setPoolThreads(poolThreads);
}

} // namespace

namespace {

// appendCacheRows: what a generated executor calls for tm.cache_append.
// Rows land after the `offset` already cached, read `rowStride` floats apart
// (a fused projection's k or v), stored as the cache's precision says.
TEST(ExecutorSupport, AppendsCacheRowsInTheirPrecision) {
  // Two rows of 3 values, 5 floats apart (columns 1..3 of a wider buffer).
  const float source[] = {9, 1.0f, -2.5f, 65519.0f, 9, 9, 1.0f + 0x1p-9f, 0x1p-25f, -0.0f, 9};
  const float *rows = source + 1;

  float f32[9] = {7, 7, 7, 7, 7, 7, 7, 7, 7};
  appendCacheRows(f32, CacheStorage::F32, 3, 1, rows, 2, 5);
  const float expected32[] = {7, 7, 7, 1.0f, -2.5f, 65519.0f, 1.0f + 0x1p-9f, 0x1p-25f, -0.0f};
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(f32[i], expected32[i]) << i;

  // f16: 65519 rounds to 65504 (0x7bff), 1 + 2^-9 keeps its bit, 2^-25 (half
  // the smallest subnormal, a tie) rounds to even: zero.
  uint16_t f16[9] = {};
  appendCacheRows(f16, CacheStorage::F16, 3, 1, rows, 2, 5);
  const uint16_t expected16[] = {0, 0, 0, 0x3c00, 0xc100, 0x7bff, 0x3c02, 0x0000, 0x8000};
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(f16[i], expected16[i]) << i;

  // bf16: 8 significant bits: 2^-9 is under half of 1's ulp (2^-8), so
  // 1 + 2^-9 rounds to 1; 65519 rounds up to 65536 (0x4780).
  uint16_t b16[9] = {};
  appendCacheRows(b16, CacheStorage::BF16, 3, 1, rows, 2, 5);
  const uint16_t expectedB[] = {0, 0, 0, 0x3f80, 0xc020, 0x4780, 0x3f80, 0x3300, 0x8000};
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(b16[i], expectedB[i]) << i;
}

// A long f16 row goes eight values at a time where the CPU has F16C: every
// value as floatToHalf rounds it, at the edges of each range (subnormal
// results and their ties, the largest finite, overflow to infinity, NaN in
// a group of eight) and at random bit patterns, in whole groups and a tail.
TEST(ExecutorSupport, F16CacheRowsRoundAsFloatToHalf) {
  std::vector<float> values = {
      0.0f,      -0.0f,        1.0f,     0x1p-24f,  0x1p-25f,        0x3p-26f,
      0x1p-14f,  0x1.ffcp-15f, 65504.0f, 65519.99f, 65520.0f,        -65520.0f,
      INFINITY,  -INFINITY,    NAN,      -NAN,      1.0f + 0x1p-11f, 1.0f + 0x3p-11f,
      0x1p-126f, -0x1p-149f};
  std::mt19937 rng(7);
  for (int i = 0; i < 4093; ++i) {
    uint32_t bits = static_cast<uint32_t>(rng());
    // Mostly the exponents that f16 can hold or just miss.
    if (i % 4 != 0)
      bits = (bits & 0x807fffffu) | ((static_cast<uint32_t>(rng() % 48) + 100u) << 23);
    float value;
    std::memcpy(&value, &bits, sizeof value);
    values.push_back(value);
  }
  const int64_t width = static_cast<int64_t>(values.size());
  std::vector<uint16_t> cache(static_cast<size_t>(width), 0xdead);
  appendCacheRows(cache.data(), CacheStorage::F16, width, 0, values.data(), 1, width);
  for (size_t i = 0; i < values.size(); ++i)
    ASSERT_EQ(cache[i], tmr::floatToHalf(values[i])) << i << ": " << values[i];
}

} // namespace
