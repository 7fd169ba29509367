//===- Q4GemmKernelTest.cpp - q4 pack + GEMM against a written-out Q4_0 -----===//
//
// precision = q4: the pack kernel quantizes every block of 32 inputs of an
// output channel as ggml's quantize_row_q4_0_ref does and lays out the
// nibbles and f16 scales as LowerPack.cpp's contract says (checked byte by
// byte against a quantizer written here from docs/spec-language.md); the
// GEMM quantizes each token row to s8 and sums each block's products in
// int32, then the blocks, each times its scale, in f32. The reference sums
// the same integers exactly and the blocks in double, so what is left is
// the f32 sum over B blocks: within (B + 3) ulps of the sum of the terms'
// magnitudes (the textbook bound of recursive summation), which a wrong
// nibble, scale or row sum exceeds by orders of magnitude. Partial and odd
// block counts (a padding block), N below a vector and past a panel, the
// decode tile, row tasks, a zero channel and a block whose largest values
// tie in magnitude with opposite signs; AVX2, AVX-512, and AVX-512 with
// VNNI (vpdpbusd, where this CPU has it).
//
//===----------------------------------------------------------------------===//

#include "compiler/KernelPlan.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"
#include "compiler/halide/Lowering.h"

#include "tests/unit/kernels/ParamFinder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using namespace tmc;

namespace {

constexpr int kBlock = 32;

/// One output channel as Q4_0 blocks: q in [0, 15] (K padded with zeros to
/// whole blocks) and each block's f16 scale bits.
struct Q4Channel {
  std::vector<int> q;
  std::vector<uint16_t> scaleBits;
  float scale(int block) const {
    return static_cast<float>(Halide::float16_t::make_from_bits(scaleBits[block]));
  }
};

/// ggml's quantize_row_q4_0_ref, as docs/spec-language.md states it.
Q4Channel quantizeQ4(const std::vector<float> &row) {
  const int blocks = (static_cast<int>(row.size()) + kBlock - 1) / kBlock;
  Q4Channel c;
  for (int b = 0; b < blocks; ++b) {
    float values[kBlock];
    float amax = 0, mx = 0;
    for (int i = 0; i < kBlock; ++i) {
      const size_t k = size_t(b) * kBlock + i;
      values[i] = k < row.size() ? row[k] : 0.0f;
      if (amax < std::fabs(values[i])) {
        amax = std::fabs(values[i]);
        mx = values[i];
      }
    }
    const float d = mx / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (float v : values) {
      volatile float product = v * id; // rounded to f32 before the add, as the contract says
      c.q.push_back(std::min(15, static_cast<int>(product + 8.5f)));
    }
    c.scaleBits.push_back(Halide::float16_t(d).to_bits());
  }
  return c;
}

using Q4Case = test::ReducedGemmCase;

const Q4Case kCases[] = {
    {"k37_n10_bias", 37, 10, true, "none"},
    {"k64_n100_relu", 64, 100, false, "relu"},
    {"k1_n1_bias", 1, 1, true, "none"},
    {"k96_n72_row_tasks", 96, 72, false, "relu", 1, true},
    {"k768_n200_default", 768, 200, true, "none"},
    {"k3072_n40_long", 3072, 40, true, "none"},
    {"k40_n33_zero_channel", 40, 33, true, "none", 1, false, true},
};

class Q4GemmKernelTest : public ::testing::TestWithParam<std::tuple<std::string, Q4Case>> {};

TEST_P(Q4GemmKernelTest, MatchesTheQuantizedInputsSummedExactly) {
  auto [targetName, c] = GetParam();
  test::TestTarget tt = test::testTarget(targetName);
  ASSERT_TRUE(tt.info) << tt.error;
  if (!tt.runsHere)
    GTEST_SKIP() << "this CPU lacks a feature of " << targetName;

  KernelDesc desc = test::linearKernel(c.K, c.N, c.bias, c.activation, "q4");
  Schedule schedule = defaultSchedule(desc, *tt.info);
  schedule.parallelRows = c.parallelRows;
  const int K = static_cast<int>(c.K), N = static_cast<int>(c.N);
  const int B = (K + kBlock - 1) / kBlock;
  GemmLayout layout = gemmLayout(desc, schedule);
  ASSERT_TRUE(layout.q4);
  ASSERT_EQ(layout.q4Blocks, B);

  auto [rng, w, bias] = test::reducedGemmInputs(c);
  // Channel N - 1's first block: its largest magnitude twice, + then -
  // (the first wins: d = -2/8), and -3 then +3 in the last block (d = 3/8).
  if (K >= 4 && N >= 2) {
    w(1, N - 1) = 2.0f;
    w(3, N - 1) = -2.0f;
    w((B - 1) * kBlock, N - 1) = -3.0f;
    w(K - 1, N - 1) = 3.0f;
  }
  std::vector<Q4Channel> channels;
  for (int n = 0; n < N; ++n)
    channels.push_back(quantizeQ4(test::lineOf(w, n)));
  if (K >= 4 && N >= 2) {
    EXPECT_EQ(channels[N - 1].scale(0), -0.25f);
    if (B > 1) {
      EXPECT_EQ(channels[N - 1].scale(B - 1), 0.375f);
    }
  }

  BufferShape shape = halide::packedWeightShape(desc, schedule);
  ASSERT_TRUE(shape.isInt8);
  ASSERT_EQ(shape.extents.size(), 4u);
  std::vector<int> extents(shape.extents.begin(), shape.extents.end());
  const int P = extents[1];
  ASSERT_EQ(extents[0], 4);
  ASSERT_EQ(extents[2], 9 * ((B + 1) / 2));
  Halide::Buffer<int8_t> packed(extents);
  // The pack kernel's target as the compiler picks it (Target.h's withoutDotProducts).
  Halide::Target packHalide(withoutDotProducts(*tt.info).halideTarget);
  test::realizeWith(halide::lowerPackWeight(desc, schedule), packHalide, {{"weight", w}}, packed);
  // The contract: per pair of blocks, 4 rows of nibble pairs for each block,
  // then a row of the two blocks' f16 scales.
  for (int p = 0; p < extents[3]; ++p)
    for (int j = 0; j < P; ++j) {
      const int n = p * P + j;
      for (int r = 0; r < extents[2]; ++r)
        for (int e = 0; e < 4; ++e) {
          const int s = r / 9, i = r % 9;
          int want = 0;
          if (n < N && i < 8) {
            const int b = 2 * s + i / 4, h = i % 4;
            want = b < B ? channels[n].q[b * kBlock + 8 * h + e] |
                               channels[n].q[b * kBlock + 8 * h + 4 + e] << 4
                         : 0x88;
          } else if (i == 8) {
            // Byte o of the row: runs of low and high scale bytes per block.
            const int o = 4 * j + e, q = o / (2 * P), high = (o / P) % 2, c = o % P;
            const int b = 2 * s + q, channel = p * P + c;
            if (b < B && channel < N)
              want = (channels[channel].scaleBits[b] >> (8 * high)) & 0xff;
          }
          ASSERT_EQ(static_cast<uint8_t>(packed(e, j, r, p)), want)
              << "packed(" << e << ", " << j << ", " << r << ", " << p << "), n=" << n;
        }
    }
  // The same bytes from the weight pre-quantized as `tmc quantize` writes
  // it (docs/spec-language.md): byte i of a block holds its values i (low
  // nibble) and i + 16; the blocks' f16 scales.
  Halide::Buffer<uint8_t> values(16 * B, N);
  Halide::Buffer<uint16_t> scales(B, N);
  for (int n = 0; n < N; ++n)
    for (int b = 0; b < B; ++b) {
      scales(b, n) = channels[n].scaleBits[b];
      for (int i = 0; i < 16; ++i)
        values(16 * b + i, n) = static_cast<uint8_t>(channels[n].q[b * kBlock + i] |
                                                     channels[n].q[b * kBlock + 16 + i] << 4);
    }
  Halide::Buffer<int8_t> fromQuantized(extents);
  test::realizeWith(halide::lowerPackQuantizedWeight(desc, schedule), packHalide,
                    {{"values", values}, {"scales", scales}}, fromQuantized);
  ASSERT_EQ(std::memcmp(fromQuantized.data(), packed.data(), packed.size_in_bytes()), 0)
      << "the pre-quantized pack differs from the f32 pack";

  halide::LoweredKernel gemm = halide::lowerPackedLinear(desc, schedule);
  for (int T : {1, 5, 13, 130}) {
    Halide::Buffer<float> x = test::spreadTokens(K, T, rng);
    Halide::Buffer<float> y(N, T);
    std::map<std::string, Halide::Buffer<>> inputs = {
        {"x", x}, {"packed_weight", packed}, {"bias", bias}};
    test::realizeWith(gemm, tt.halide, inputs, y);
    test::expectRowsMatchAlone(gemm, tt.halide, inputs, y, schedule.str());
    for (int t = 0; t < T; ++t) {
      const test::QuantizedRow tokens = test::quantizeRow(test::lineOf(x, t));
      for (int n = 0; n < N; ++n) {
        double sum = 0, magnitude = 0;
        for (int b = 0; b < B; ++b) {
          int64_t dot = 0;
          for (int i = 0; i < kBlock && b * kBlock + i < K; ++i)
            dot += int64_t(channels[n].q[b * kBlock + i] - 8) * tokens.values[b * kBlock + i];
          const double term = static_cast<double>(dot) * channels[n].scale(b);
          sum += term;
          magnitude += std::abs(term);
        }
        const double b = c.bias ? bias(n) : 0.0;
        double value = sum * tokens.scale + b;
        double ref = std::string(c.activation) == "relu" ? std::max(value, 0.0) : value;
        const double bound =
            (B + 3) * std::ldexp(1.0, -24) * (magnitude * tokens.scale + std::abs(b));
        ASSERT_LE(std::abs(y(n, t) - ref), bound)
            << "T=" << T << ", row " << t << ", channel " << n << ", " << schedule.str();
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, Q4GemmKernelTest,
                         ::testing::ValuesIn(test::targetCases(
                             {"x86-64-avx2", "x86-64-avx512", "x86-64-avx512-bf16"}, kCases)),
                         [](const auto &info) { return test::targetCaseName(info); });

} // namespace
