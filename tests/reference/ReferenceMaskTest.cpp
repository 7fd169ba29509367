//===- ReferenceMaskTest.cpp - Mask rules and masked attention ------------===//
//
// The reference's own mask rules (reference/ReferenceMask.h, written apart
// from the compiler's frontend/Masks.h) against patterns drawn by hand from
// docs/spec-language.md, its random-mask generator against SplitMix64 values
// computed apart (Python, and the published first output for seed 0), then
// the evaluator's attention under those masks through the probe model, whose
// output spells out the attention weights.
//
//===----------------------------------------------------------------------===//

#include "reference/ReferenceMask.h"
#include "tests/reference/ReferenceTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tmc;
using namespace tmc::reftest;

namespace {

MaskTerm term(MaskKind kind) {
  MaskTerm t;
  t.kind = kind;
  return t;
}
MaskTerm window(MaskKind kind, int64_t size, int64_t dilation = 1) {
  MaskTerm t = term(kind);
  t.size = size;
  t.dilation = dilation;
  return t;
}
MaskTerm global(std::vector<int64_t> tokens) {
  MaskTerm t = term(MaskKind::Global);
  t.tokens = std::move(tokens);
  return t;
}
MaskTerm randomTerm(int64_t perRow, uint64_t seed) {
  MaskTerm t = term(MaskKind::Random);
  t.perRow = perRow;
  t.seed = seed;
  return t;
}
MaskSpec mask(std::vector<MaskTerm> terms) {
  MaskSpec m;
  m.terms = std::move(terms);
  return m;
}

/// Row i: '1' where query i may see key j, '.' elsewhere.
std::vector<std::string> pattern(const MaskSpec &m, bool decoder, int64_t maxSeq,
                                 int64_t count, int64_t length) {
  std::vector<std::string> rows;
  for (int64_t i = 0; i < count; ++i) {
    std::string row;
    for (int64_t j = 0; j < count; ++j)
      row += ref::queryMaySeeKey(m, decoder, maxSeq, i, j, length) ? '1' : '.';
    rows.push_back(row);
  }
  return rows;
}

using Rows = std::vector<std::string>;

TEST(ReferenceMasks, NoneSeesEverything) {
  EXPECT_EQ(pattern(mask({}), false, 8, 3, 3), (Rows{"111", "111", "111"}));
  EXPECT_EQ(pattern(mask({}), true, 8, 3, 3), (Rows{"111", "111", "111"}));
}

TEST(ReferenceMasks, CausalIsLowerTriangle) {
  EXPECT_EQ(pattern(mask({term(MaskKind::Causal)}), true, 8, 4, 4),
            (Rows{"1...", "11..", "111.", "1111"}));
}

TEST(ReferenceMasks, PaddingHidesKeysAtOrPastLength) {
  EXPECT_EQ(pattern(mask({term(MaskKind::Padding)}), false, 8, 4, 2),
            (Rows{"11..", "11..", "11..", "11.."}));
}

TEST(ReferenceMasks, SlidingWindowInEncoderIsSymmetric) {
  // |i - j| <= 4 / 2.
  EXPECT_EQ(pattern(mask({window(MaskKind::SlidingWindow, 4)}), false, 8, 6, 6),
            (Rows{"111...", "1111..", "11111.", ".11111", "..1111", "...111"}));
}

TEST(ReferenceMasks, SlidingWindowInDecoderLooksBack) {
  // i - 3 < j <= i.
  EXPECT_EQ(pattern(mask({window(MaskKind::SlidingWindow, 3)}), true, 8, 6, 6),
            (Rows{"1.....", "11....", "111...", ".111..", "..111.", "...111"}));
}

TEST(ReferenceMasks, DilatedWindowKeepsEveryDthKey) {
  // |i - j| <= 2 and i - j even.
  EXPECT_EQ(pattern(mask({window(MaskKind::DilatedWindow, 4, 2)}), false, 8, 6, 6),
            (Rows{"1.1...", ".1.1..", "1.1.1.", ".1.1.1", "..1.1.", "...1.1"}));
  // i - 4 < j <= i and i - j even.
  EXPECT_EQ(pattern(mask({window(MaskKind::DilatedWindow, 4, 2)}), true, 8, 6, 6),
            (Rows{"1.....", ".1....", "1.1...", ".1.1..", "..1.1.", "...1.1"}));
}

TEST(ReferenceMasks, GlobalTokensSeeAndAreSeen) {
  EXPECT_EQ(pattern(mask({global({0, 3})}), false, 8, 5, 5),
            (Rows{"11111", "1..1.", "1..1.", "11111", "1..1."}));
}

TEST(ReferenceMasks, OddEncoderWindowsReachHalfTheSizeRoundedDown) {
  // |i - j| <= 3/2 = 1.5 keeps distance 1; |i - j| <= 1/2 only the query.
  EXPECT_EQ(pattern(mask({window(MaskKind::SlidingWindow, 3)}), false, 8, 5, 5),
            (Rows{"11...", "111..", ".111.", "..111", "...11"}));
  EXPECT_EQ(pattern(mask({window(MaskKind::SlidingWindow, 1)}), false, 8, 3, 3),
            (Rows{"1..", ".1.", "..1"}));
  // In a decoder i - 1 < j <= i: the query alone.
  EXPECT_EQ(pattern(mask({window(MaskKind::SlidingWindow, 1)}), true, 8, 3, 3),
            (Rows{"1..", ".1.", "..1"}));
}

TEST(ReferenceMasks, DilatedWindowCountsDistanceBothWays) {
  // |i - j| <= 7/2 and 3 divides i - j (negative differences included).
  EXPECT_EQ(pattern(mask({window(MaskKind::DilatedWindow, 7, 3)}), false, 8, 7, 7),
            (Rows{"1..1...", ".1..1..", "..1..1.", "1..1..1", ".1..1..", "..1..1.",
                  "...1..1"}));
  // i - 7 < j <= i and 3 divides i - j: row 6 reaches back to key 0.
  EXPECT_EQ(pattern(mask({window(MaskKind::DilatedWindow, 7, 3)}), true, 8, 7, 7),
            (Rows{"1......", ".1.....", "..1....", "1..1...", ".1..1..", "..1..1.",
                  "1..1..1"}));
}

TEST(ReferenceMasks, GlobalInADecoderSeesAheadUnlessCausal) {
  // Without causal, token 2 sees every key, later ones included.
  EXPECT_EQ(pattern(mask({global({2})}), true, 8, 4, 4),
            (Rows{"..1.", "..1.", "1111", "..1."}));
  // causal + global(tokens = [2]): rows before 2 are left with no key, as the
  // doc's `causal + global(tokens = [4])` example says of positions 0..3.
  EXPECT_EQ(pattern(mask({term(MaskKind::Causal), global({2})}), true, 8, 4, 4),
            (Rows{"....", "....", "111.", "..1."}));
}

TEST(ReferenceMasks, CausalAndPaddingAloneLeaveTheRestAllowed) {
  EXPECT_EQ(pattern(mask({term(MaskKind::Causal), term(MaskKind::Padding)}), true, 8, 4, 3),
            (Rows{"1...", "11..", "111.", "111."}));
}

TEST(ReferenceMasks, WindowAndRandomUnite) {
  // random(per_row = 2, seed = 42) over max_seq 6 draws, row by row,
  // {1, 1}, {0, 0}, {4, 0}, {1, 2}, {1, 2}, {5, 4}; the window adds |i - j| <= 1.
  EXPECT_EQ(pattern(mask({window(MaskKind::SlidingWindow, 2), randomTerm(2, 42)}), false, 6,
                    6, 6),
            (Rows{"11....", "111...", "11111.", ".1111.", ".11111", "....11"}));
}

TEST(ReferenceMasks, SumIsUnionRestrictedByCausalAndPadding) {
  // Decoder: window j in {i-1, i} or key 0, never a future key.
  MaskSpec decoderMask = mask({term(MaskKind::Causal), window(MaskKind::SlidingWindow, 2),
                               global({0})});
  EXPECT_EQ(pattern(decoderMask, true, 8, 5, 5),
            (Rows{"1....", "11...", "111..", "1.11.", "1..11"}));
  decoderMask.terms.push_back(term(MaskKind::Padding));
  EXPECT_EQ(pattern(decoderMask, true, 8, 5, 4),
            (Rows{"1....", "11...", "111..", "1.11.", "1..1."}));
  // Encoder, as bert_local's lower layers: |i - j| <= 1, plus token 0 both
  // ways, nothing at or past the length 4.
  MaskSpec encoderMask = mask({term(MaskKind::Padding), window(MaskKind::SlidingWindow, 2),
                               global({0})});
  EXPECT_EQ(pattern(encoderMask, false, 8, 5, 4),
            (Rows{"1111.", "111..", "1111.", "1.11.", "1..1."}));
}

TEST(ReferenceMasks, RandomKeysAreSplitMix64) {
  // z = S + n * golden with n = i * R + r + 1 is SplitMix64's n-th output
  // from seed S; its first output from seed 0 is 0xE220A8397B1DCDAF.
  EXPECT_EQ(ref::randomMaskDraws(1, 0, INT64_MAX, 0),
            (std::vector<int64_t>{static_cast<int64_t>(0xE220A8397B1DCDAFull % INT64_MAX)}));
  // Computed apart, in Python.
  const std::vector<std::vector<int64_t>> seed42 = {{5, 3},  {2, 4},  {2, 6},
                                                    {13, 4}, {5, 14}, {15, 14}};
  for (int64_t row = 0; row < 6; ++row)
    EXPECT_EQ(ref::randomMaskDraws(2, 42, 16, row), seed42[row]) << "row " << row;
  EXPECT_EQ(ref::randomMaskDraws(3, 7, 1000003, 5),
            (std::vector<int64_t>{902904, 423360, 608587}));
}

TEST(ReferenceMasks, RandomPatternIgnoresLengthButPaddingHidesIt) {
  // random(per_row = 2, seed = 42) over max_seq 6 picks, row by row,
  // {1, 1}, {0, 0}, {4, 0}, {1, 2}, {1, 2}, {5, 4}; repeats count once.
  MaskSpec m = mask({randomTerm(2, 42)});
  Rows expected = {".1....", "1.....", "1...1.", ".11...", ".11...", "....11"};
  EXPECT_EQ(pattern(m, false, 6, 6, 6), expected);
  EXPECT_EQ(pattern(m, false, 6, 6, 3), expected); // length matters only to padding
  m.terms.push_back(term(MaskKind::Padding));
  EXPECT_EQ(pattern(m, false, 6, 6, 5),
            (Rows{".1....", "1.....", "1...1.", ".11...", ".11...", "....1."}));
}

struct ProbeCase {
  std::string name;
  bool decoder;
  MaskSpec mask;
  int64_t width, count;
  std::optional<int64_t> length;
  Rows expected; // which keys each query sees, weighted uniformly
};

void PrintTo(const ProbeCase &c, std::ostream *os) { *os << c.name; }

class ReferenceMaskedAttention : public ::testing::TestWithParam<ProbeCase> {};

TEST_P(ReferenceMaskedAttention, ProbeSeesUniformWeightsOverAllowedKeys) {
  const ProbeCase &c = GetParam();
  ModelSpec spec = probeSpec(c.decoder, c.width);
  (c.decoder ? spec.decoder : spec.encoder).mask = c.mask;
  WeightStore weights = probeWeights(spec);
  ref::Inputs inputs = tokensOnly(iota(c.count));
  inputs.length = c.length;
  auto out = run(spec, weights, inputs);
  for (double value : out)
    ASSERT_TRUE(std::isfinite(value));
  expectNear(out, probeExpected(c.expected, c.width), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(
    Masks, ReferenceMaskedAttention,
    ::testing::Values(
        ProbeCase{"encoder_none", false, mask({}), 4, 3, std::nullopt,
                  {"111", "111", "111"}},
        ProbeCase{"decoder_causal", true, mask({term(MaskKind::Causal)}), 4, 4,
                  std::nullopt, {"1...", "11..", "111.", "1111"}},
        ProbeCase{"encoder_padding", false, mask({term(MaskKind::Padding)}), 4, 4, 2,
                  {"11..", "11..", "11..", "11.."}},
        // A length without a padding term hides nothing.
        ProbeCase{"encoder_length_without_padding", false, mask({}), 4, 3, 1,
                  {"111", "111", "111"}},
        ProbeCase{"decoder_window", true,
                  mask({term(MaskKind::Causal), window(MaskKind::SlidingWindow, 2)}), 4, 4,
                  std::nullopt, {"1...", "11..", ".11.", "..11"}},
        ProbeCase{"encoder_window_global_padding", false,
                  mask({term(MaskKind::Padding), window(MaskKind::SlidingWindow, 2),
                        global({0})}),
                  5, 5, 4, {"1111.", "111..", "1111.", "1.11.", "1..1."}},
        // Row 0 draws only key 1, which causal hides: it sees nothing and
        // must read zeros, not NaN.
        ProbeCase{"decoder_random_causal", true,
                  mask({term(MaskKind::Causal), randomTerm(2, 42)}), 6, 6, std::nullopt,
                  {"......", "1.....", "1.....", ".11...", ".11...", "....11"}},
        // Past the window of the one valid key, a padded query sees nothing.
        ProbeCase{"encoder_empty_padded_rows", false,
                  mask({term(MaskKind::Padding), window(MaskKind::SlidingWindow, 2)}), 4,
                  4, 1, {"1...", "1...", "....", "...."}}),
    [](const ::testing::TestParamInfo<ProbeCase> &info) { return info.param.name; });

} // namespace
