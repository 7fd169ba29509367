//===- WindowCacheTest.cpp - Caches bounded by a window, runs in chunks ---===//
//
// runtime/window_cache.cpp: a bounded cache's rows are the positions from
// its header's first on, whatever the runs appended and moved; a sequence
// can go back only to what the window still sees; runs longer than a chunk
// reach the executor as consecutive chunks with their outputs in place. The
// e2e suite runs these inside compiled windowed decoders; here each rule is
// checked value by value.
//
//===----------------------------------------------------------------------===//

#include "runtime/executor_support.h"

#include "runtime/aligned.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace tmr::executor;

constexpr int64_t kWidth = 2, kCapacity = 7, kKeep = 3;

/// A bounded cache of kCapacity rows of kWidth f32 values.
struct Ring {
  tmr::AlignedVector<uint8_t> memory =
      tmr::AlignedVector<uint8_t>(TMR_RING_HEADER_BYTES + kCapacity * kWidth * sizeof(float));
  char err[256] = "";

  /// Appends positions [offset, offset + count), each row {p, -p}.
  int append(int32_t offset, int32_t count) {
    std::vector<float> rows;
    for (int32_t p = offset; p < offset + count; ++p)
      rows.insert(rows.end(), {float(p), float(-p)});
    err[0] = 0;
    return appendRingRows(memory.data(), CacheStorage::F32, kWidth, kCapacity, kKeep, offset,
                          rows.data(), count, kWidth, "layers.0.k", err, sizeof err);
  }
  int32_t first() const { return ringFirstPosition(memory.data()); }
  /// The position row `r` holds (its first value), checked against its second.
  float row(int64_t r) const {
    const float *rows = reinterpret_cast<const float *>(memory.data() + TMR_RING_HEADER_BYTES);
    EXPECT_EQ(rows[r * kWidth + 1], -rows[r * kWidth]) << "row " << r;
    return rows[r * kWidth];
  }
  /// Every position in [from, to) is where the view of the cache finds it.
  void expectHolds(int32_t from, int32_t to) const {
    for (int32_t p = from; p < to; ++p)
      EXPECT_EQ(row(p - first()), float(p)) << "position " << p;
  }
};

TEST(WindowCache, RowsHoldPositionsFromTheFirstOnAcrossMoves) {
  Ring ring;
  ASSERT_EQ(ring.append(0, 4), 0) << ring.err; // a prompt: rows 0-3
  EXPECT_EQ(ring.first(), 0);
  ring.expectHolds(0, 4);
  ASSERT_EQ(ring.append(4, 3), 0) << ring.err; // fills the 7 rows
  EXPECT_EQ(ring.first(), 0);
  ring.expectHolds(0, 7);
  // Position 7 does not fit: the 3 positions before it (4-6) move to the
  // front, 7 goes after them.
  ASSERT_EQ(ring.append(7, 1), 0) << ring.err;
  EXPECT_EQ(ring.first(), 4);
  ring.expectHolds(4, 8);
  for (int32_t p = 8; p < 40; ++p) // decoding steps
    ASSERT_EQ(ring.append(p, 1), 0) << ring.err;
  EXPECT_GE(ring.first(), 40 - kCapacity);
  ring.expectHolds(40 - kKeep - 1, 40);
  // A chunk of the most tokens a run may carry (capacity - keep).
  ASSERT_EQ(ring.append(40, 4), 0) << ring.err;
  EXPECT_EQ(ring.first(), 40 - kKeep);
  ring.expectHolds(40 - kKeep, 44);
}

TEST(WindowCache, ANewSequenceStartsOver) {
  Ring ring;
  for (int32_t p = 0; p < 20; ++p)
    ASSERT_EQ(ring.append(p, 1), 0) << ring.err;
  ASSERT_EQ(ring.append(0, 2), 0) << ring.err;
  EXPECT_EQ(ring.first(), 0);
  ring.expectHolds(0, 2);
}

TEST(WindowCache, GoesBackOnlyToWhatTheWindowStillSees) {
  Ring ring;
  for (int32_t p = 0; p < 12; ++p)
    ASSERT_EQ(ring.append(p, 1), 0) << ring.err;
  const int32_t first = ring.first();
  // Rewinding to position `first + keep` re-reads only rows it holds.
  ASSERT_EQ(ring.append(first + kKeep, 1), 0) << ring.err;
  ring.expectHolds(first, first + kKeep + 1);
  EXPECT_EQ(ring.append(first + kKeep - 1, 1), 1);
  EXPECT_EQ(std::string(ring.err),
            "cache 'layers.0.k' keeps the last 3 positions of its window and now starts at " +
                std::to_string(first) + "; a run after " + std::to_string(first + kKeep - 1) +
                " cached tokens reads position " + std::to_string(first - 1) +
                ": a sequence can go back at most to the positions its window still sees");
}

TEST(WindowCache, RefusesRowsNeverWrittenAndRunsLongerThanAChunk) {
  Ring ring;
  ASSERT_EQ(ring.append(0, 2), 0) << ring.err;
  EXPECT_EQ(ring.append(3, 1), 1);
  EXPECT_EQ(std::string(ring.err), "cache 'layers.0.k' holds 2 tokens; a run after 3 cached ones "
                                   "would read rows never written");
  ASSERT_EQ(ring.append(2, 5), 0) << ring.err; // fits after positions 0 and 1
  // After the kept rows (4-6), 5 more do not fit.
  EXPECT_EQ(ring.append(7, 5), 1);
  EXPECT_EQ(std::string(ring.err),
            "a run of 5 tokens does not fit cache 'layers.0.k' (7 rows, 3 of them kept for its "
            "window): runs of this model carry at most 4 tokens");
}

TEST(WindowCache, StoresReducedRowsAndMovesThemWhole) {
  // bf16 rows: 2 bytes a value; a move must carry whole rows.
  tmr::AlignedVector<uint8_t> memory(TMR_RING_HEADER_BYTES + kCapacity * kWidth * 2);
  char err[256] = "";
  for (int32_t p = 0; p < 9; ++p) {
    float row[kWidth] = {float(p), float(p) + 0.5f};
    ASSERT_EQ(appendRingRows(memory.data(), CacheStorage::BF16, kWidth, kCapacity, kKeep, p, row, 1,
                             kWidth, "k", err, sizeof err),
              0)
        << err;
  }
  const int32_t first = ringFirstPosition(memory.data());
  const uint16_t *rows = reinterpret_cast<const uint16_t *>(memory.data() + TMR_RING_HEADER_BYTES);
  for (int32_t p = first; p < 9; ++p) {
    // bf16 holds small integers and halves exactly: the top 16 bits of the f32.
    float value = float(p), half = float(p) + 0.5f;
    uint32_t bits, halfBits;
    std::memcpy(&bits, &value, 4);
    std::memcpy(&halfBits, &half, 4);
    EXPECT_EQ(rows[(p - first) * kWidth], bits >> 16) << "position " << p;
    EXPECT_EQ(rows[(p - first) * kWidth + 1], halfBits >> 16) << "position " << p;
  }
}

/// The runs runInChunks hands the executor, as (tokens[0], num_tokens,
/// offset, length, output row, last_row_only, cache) records.
struct Chunk {
  int32_t firstToken;
  int64_t tokens, offset, length, outputRow;
  int32_t lastRow;
  void *cache;
  bool operator==(const Chunk &) const = default;
};
std::vector<Chunk> seen;
float *outputBase = nullptr;

int recordChunk(const tmr_run_args *args, char *, size_t) {
  seen.push_back({args->tokens[0], args->num_tokens, args->offset, args->length,
                  (args->output - outputBase) / 3, args->last_row_only, args->cache});
  return 0;
}

tmr_model_desc chunkedDecoder() {
  tmr_model_desc model{};
  model.abi_version = TMR_ABI_VERSION;
  model.max_seq = 64;
  model.output_width = 3;
  model.cache_bytes = 1024;
  return model;
}

TEST(WindowCache, LongRunsReachTheExecutorInChunksWithTheirOutputsInPlace) {
  tmr_model_desc model = chunkedDecoder();
  std::vector<int32_t> tokens(20);
  for (int32_t t = 0; t < 20; ++t)
    tokens[t] = 100 + t;
  tmr::AlignedVector<float> output(20 * 3);
  tmr::AlignedVector<uint8_t> cache(1024), other(1024);
  outputBase = output.data();
  tmr_run_args args{};
  args.tokens = tokens.data();
  args.num_tokens = 10;
  args.offset = 5;
  args.length = 10;
  args.cache = cache.data();
  args.output = output.data();
  char err[256] = "";
  seen.clear();
  ASSERT_EQ(runInChunks(args, model, 4, recordChunk, err, sizeof err), 0) << err;
  EXPECT_EQ(seen, (std::vector<Chunk>{{100, 4, 5, 0, 0, 0, cache.data()},
                                      {104, 4, 9, 0, 4, 0, cache.data()},
                                      {108, 2, 13, 0, 8, 0, cache.data()}}));
  // The last row alone: each chunk's replaces the one before.
  args.last_row_only = 1;
  seen.clear();
  ASSERT_EQ(runInChunks(args, model, 4, recordChunk, err, sizeof err), 0) << err;
  EXPECT_EQ(seen, (std::vector<Chunk>{{100, 4, 5, 0, 0, 1, cache.data()},
                                      {104, 4, 9, 0, 0, 1, cache.data()},
                                      {108, 2, 13, 0, 0, 1, cache.data()}}));
  // Short enough: one run, as given.
  args.num_tokens = 4;
  args.length = 3;
  seen.clear();
  ASSERT_EQ(runInChunks(args, model, 4, recordChunk, err, sizeof err), 0) << err;
  EXPECT_EQ(seen, (std::vector<Chunk>{{100, 4, 5, 3, 0, 1, cache.data()}}));

  // A batch with a long sequence runs its sequences one by one.
  tmr_sequence_run sequences[2] = {};
  sequences[0].num_tokens = 2;
  sequences[0].offset = 7;
  sequences[0].cache = cache.data();
  sequences[1].num_tokens = 6;
  sequences[1].cache = other.data();
  args = tmr_run_args{};
  args.tokens = tokens.data();
  args.num_tokens = 8;
  args.output = output.data();
  args.num_sequences = 2;
  args.sequences = sequences;
  model.max_batch = 2;
  seen.clear();
  ASSERT_EQ(runInChunks(args, model, 4, recordChunk, err, sizeof err), 0) << err;
  EXPECT_EQ(seen, (std::vector<Chunk>{{100, 2, 7, 0, 0, 0, cache.data()},
                                      {102, 4, 0, 0, 2, 0, other.data()},
                                      {106, 2, 4, 0, 6, 0, other.data()}}));
  args.last_row_only = 1;
  seen.clear();
  ASSERT_EQ(runInChunks(args, model, 4, recordChunk, err, sizeof err), 0) << err;
  EXPECT_EQ(seen, (std::vector<Chunk>{{100, 2, 7, 0, 0, 1, cache.data()},
                                      {102, 4, 0, 0, 1, 1, other.data()},
                                      {106, 2, 4, 0, 1, 1, other.data()}}));
  // A batch that fits runs as one.
  sequences[1].num_tokens = 4;
  args.num_tokens = 6;
  seen.clear();
  ASSERT_EQ(runInChunks(args, model, 4, recordChunk, err, sizeof err), 0) << err;
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].tokens, 6);
}

TEST(WindowCache, AMalformedRunFailsAsInOnePiece) {
  tmr_model_desc model = chunkedDecoder();
  std::vector<int32_t> tokens(70, 1);
  tmr::AlignedVector<float> output(70 * 3);
  tmr::AlignedVector<uint8_t> cache(1024);
  tmr_run_args args{};
  args.tokens = tokens.data();
  args.num_tokens = 70;
  args.cache = cache.data();
  args.output = output.data();
  char err[256] = "";
  seen.clear();
  EXPECT_EQ(runInChunks(args, model, 4, recordChunk, err, sizeof err), 1);
  EXPECT_EQ(std::string(err), "70 tokens after 0 cached ones: this model accepts 1 to 64 in all");
  EXPECT_TRUE(seen.empty());
}

} // namespace
