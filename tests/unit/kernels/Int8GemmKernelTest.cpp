//===- Int8GemmKernelTest.cpp - int8 pack + GEMM against exact integers ---===//
//
// precision = int8: the pack kernel quantizes each output channel of the
// weight and lays out the quads, the channel's scale and its zero-point
// correction as LowerPack.cpp's contract says (checked byte by byte against
// a quantizer written here from docs/spec-language.md); the GEMM quantizes
// each token row the same way and sums u8 x s8 products in int32. The
// reference quantizes the same f32 inputs and sums the integers exactly in
// int64, so the only difference left is the f32 scaling of the integer sum
// (a few ulps): max |y - ref| / max |ref| <= 1e-6. Rows of very different
// magnitudes check that every row has its own scale. Odd K (a zero-padded
// last quad), N below a vector and past a panel, the decode tile, row tasks,
// an unrolled quad loop and a zero channel; on AVX2 and AVX-512 (Halide
// widens the bytes) and AVX-512 with VNNI (vpdpbusd, where this CPU has it).
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
#include <map>
#include <random>

using namespace tmc;

namespace {

/// Byte e (little-endian) of a 32-bit value, as the int8 the panel holds.
int8_t byteOf(uint32_t bits, int e) { return static_cast<int8_t>((bits >> (8 * e)) & 0xffu); }

using Int8Case = test::ReducedGemmCase;

const Int8Case kCases[] = {
    {"k37_n10_bias", 37, 10, true, "none"},
    {"k64_n100_relu", 64, 100, false, "relu"},
    {"k1_n1_bias", 1, 1, true, "none"},
    {"k258_n70_bias_unrolled", 258, 70, true, "none", 3},
    {"k96_n72_row_tasks", 96, 72, false, "relu", 1, true},
    {"k768_n200_default", 768, 200, true, "none"},
    {"k40_n33_zero_channel", 40, 33, true, "none", 1, false, true},
    // Blocks of 24 rows: T = 130 runs as blocks in parallel (the loop order
    // every precision shares), T = 5 and 13 as one block.
    {"k96_n72_token_blocks", 96, 72, true, "relu", 1, false, false, 24, "x86-64-avx512-bf16"},
};

class Int8GemmKernelTest : public ::testing::TestWithParam<std::tuple<std::string, Int8Case>> {};

TEST_P(Int8GemmKernelTest, MatchesExactIntegerGemmOfQuantizedInputs) {
  auto [targetName, c] = GetParam();
  test::TestTarget tt = test::testTarget(targetName);
  ASSERT_TRUE(tt.info) << tt.error;
  if (!tt.runsHere)
    GTEST_SKIP() << "this CPU lacks a feature of " << targetName;

  KernelDesc desc = test::linearKernel(c.K, c.N, c.bias, c.activation, "int8");
  Schedule schedule = defaultSchedule(desc, *tt.info);
  schedule.unrollK = c.unrollK;
  schedule.parallelRows = c.parallelRows;
  if (c.tokenBlock >= 0)
    schedule.tokenBlock = c.tokenBlock;
  const int K = static_cast<int>(c.K), N = static_cast<int>(c.N);
  GemmLayout layout = gemmLayout(desc, schedule);
  ASSERT_TRUE(layout.int8);

  auto [rng, w, bias] = test::reducedGemmInputs(c);
  std::vector<test::QuantizedRow> channels;
  for (int n = 0; n < N; ++n)
    channels.push_back(test::quantizeRow(test::lineOf(w, n)));

  BufferShape shape = halide::packedWeightShape(desc, schedule);
  ASSERT_TRUE(shape.isInt8);
  ASSERT_EQ(shape.extents.size(), 4u);
  std::vector<int> extents(shape.extents.begin(), shape.extents.end());
  const int P = extents[1], K4 = (K + 3) / 4;
  ASSERT_EQ(extents[0], 4);
  ASSERT_EQ(extents[2], K4 + 2);
  Halide::Buffer<int8_t> packed(extents);
  test::realizeWith(halide::lowerPackWeight(desc, schedule), tt.halide, {{"weight", w}}, packed);
  // The contract: quads of q, then the scale's and the correction's bytes.
  for (int p = 0; p < extents[3]; ++p)
    for (int j = 0; j < P; ++j) {
      const int n = p * P + j;
      uint32_t scaleBits = 0, correctionBits = 0;
      if (n < N) {
        std::memcpy(&scaleBits, &channels[n].scale, sizeof scaleBits);
        int sum = 0;
        for (int v : channels[n].values)
          sum += v;
        correctionBits = static_cast<uint32_t>(128 * sum);
      }
      for (int e = 0; e < 4; ++e) {
        for (int k4 = 0; k4 < K4; ++k4) {
          const int k = 4 * k4 + e;
          const int want = n < N && k < K ? channels[n].values[k] : 0;
          ASSERT_EQ(packed(e, j, k4, p), want)
              << "packed(" << e << ", " << j << ", " << k4 << ", " << p << ")";
        }
        ASSERT_EQ(packed(e, j, K4, p), byteOf(scaleBits, e)) << "scale byte " << e << ", n=" << n;
        ASSERT_EQ(packed(e, j, K4 + 1, p), byteOf(correctionBits, e))
            << "correction byte " << e << ", n=" << n;
      }
    }
  // The same bytes from the weight pre-quantized as `tmc quantize` writes
  // it (docs/spec-language.md): the values, and each channel's scale.
  Halide::Buffer<int8_t> values(K, N);
  Halide::Buffer<float> scales(N);
  for (int n = 0; n < N; ++n) {
    scales(n) = channels[n].scale;
    for (int k = 0; k < K; ++k)
      values(k, n) = static_cast<int8_t>(channels[n].values[k]);
  }
  Halide::Buffer<int8_t> fromQuantized(extents);
  test::realizeWith(halide::lowerPackQuantizedWeight(desc, schedule), tt.halide,
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
      double maxDiff = 0, maxRef = 1e-30;
      for (int n = 0; n < N; ++n) {
        int64_t sum = 0;
        for (int k = 0; k < K; ++k)
          sum += int64_t(tokens.values[k]) * channels[n].values[k];
        double value = static_cast<double>(sum) * tokens.scale * channels[n].scale +
                       (c.bias ? bias(n) : 0.0);
        double ref = std::string(c.activation) == "relu" ? std::max(value, 0.0) : value;
        maxDiff = std::max(maxDiff, std::abs(y(n, t) - ref));
        maxRef = std::max(maxRef, std::abs(ref));
      }
      // Per row: a small row's error must be small against that row.
      EXPECT_LE(maxDiff / maxRef, 1e-6) << "T=" << T << ", row " << t << ", " << schedule.str();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, Int8GemmKernelTest,
                         ::testing::ValuesIn(test::targetCases(
                             {"x86-64-avx2", "x86-64-avx512", "x86-64-avx512-bf16"}, kCases)),
                         [](const auto &info) { return test::targetCaseName(info); });

} // namespace
