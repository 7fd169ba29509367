//===- Bf16GemmKernelTest.cpp - bf16 pack + GEMM against a double GEMM ----===//
//
// precision = bf16: the pack kernel rounds the weight to bf16 pairs along K
// (LowerPack.cpp's contract, checked element by element), the GEMM rounds
// the tokens to bf16 and sums the products in f32. The reference rounds the
// same inputs to bf16 (nearest, ties to even) and sums in double, so the
// only difference left is f32 summation: max |y - ref| / max |ref| <= 1e-5,
// the f32 GEMM's own bound. Odd K (a zero-padded last pair), N below a
// vector and past a panel, the decode tile, row tasks and an unrolled pair
// loop; on AVX2 (bf16 widened in software), AVX-512, and AVX-512 with
// AVX512-BF16 (vdpbf16ps, where this CPU has it).
//
//===----------------------------------------------------------------------===//

#include "compiler/KernelPlan.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"
#include "compiler/halide/Lowering.h"

#include "tests/unit/kernels/ParamFinder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <random>

using namespace tmc;

namespace {

/// f32 to bf16 bits, round to nearest, ties to even (finite inputs).
uint16_t toBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float fromBf16(uint16_t half) {
  uint32_t bits = static_cast<uint32_t>(half) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

float roundBf16(float value) { return fromBf16(toBf16(value)); }

using Bf16Case = test::ReducedGemmCase;

const Bf16Case kCases[] = {
    {"k37_n10_bias", 37, 10, true, "none"},
    {"k64_n100_relu", 64, 100, false, "relu"},
    {"k1_n1_bias", 1, 1, true, "none"},
    {"k257_n70_bias_unrolled", 257, 70, true, "none", 3},
    {"k96_n72_row_tasks", 96, 72, false, "relu", 1, true},
    {"k768_n200_default", 768, 200, true, "none"},
};

class Bf16GemmKernelTest : public ::testing::TestWithParam<std::tuple<std::string, Bf16Case>> {};

TEST_P(Bf16GemmKernelTest, MatchesDoubleGemmOfBf16Inputs) {
  auto [targetName, c] = GetParam();
  test::TestTarget tt = test::testTarget(targetName);
  ASSERT_TRUE(tt.info) << tt.error;
  if (!tt.runsHere)
    GTEST_SKIP() << "this CPU lacks a feature of " << targetName;

  KernelDesc desc = test::linearKernel(c.K, c.N, c.bias, c.activation, "bf16");
  Schedule schedule = defaultSchedule(desc, *tt.info);
  schedule.unrollK = c.unrollK;
  schedule.parallelRows = c.parallelRows;
  const int K = static_cast<int>(c.K), N = static_cast<int>(c.N);
  GemmLayout layout = gemmLayout(desc, schedule);
  ASSERT_TRUE(layout.bf16);

  std::mt19937 rng(static_cast<unsigned>(K * 1000 + N));
  Halide::Buffer<float> w = test::randomBuffer({K, N}, rng);
  Halide::Buffer<float> bias = test::randomBuffer({N}, rng);

  BufferShape shape = halide::packedWeightShape(desc, schedule);
  ASSERT_TRUE(shape.isBF16);
  ASSERT_EQ(shape.extents.size(), 4u);
  std::vector<int> extents(shape.extents.begin(), shape.extents.end());
  Halide::Buffer<Halide::bfloat16_t> packed(extents);
  test::realizeWith(halide::lowerPackWeight(desc, schedule), tt.halide, {{"weight", w}}, packed);
  // The contract: pair e of step k2 of lane j in panel p is bf16(W[n][2 k2 + e]).
  const int P = extents[1];
  for (int p = 0; p < extents[3]; ++p)
    for (int k2 = 0; k2 < extents[2]; ++k2)
      for (int j = 0; j < P; ++j)
        for (int e = 0; e < 2; ++e) {
          int n = p * P + j, k = 2 * k2 + e;
          uint16_t want = n < N && k < K ? toBf16(w(k, n)) : 0;
          ASSERT_EQ(packed(e, j, k2, p).to_bits(), want)
              << "packed(" << e << ", " << j << ", " << k2 << ", " << p << ")";
        }

  halide::LoweredKernel gemm = halide::lowerPackedLinear(desc, schedule);
  for (int T : {1, 5, 13, 130}) {
    Halide::Buffer<float> x = test::randomBuffer({K, T}, rng);
    Halide::Buffer<float> y(N, T);
    std::map<std::string, Halide::Buffer<>> inputs = {
        {"x", x}, {"packed_weight", packed}, {"bias", bias}};
    test::realizeWith(gemm, tt.halide, inputs, y);
    test::expectRowsMatchAlone(gemm, tt.halide, inputs, y, schedule.str());
    double maxDiff = 0, maxRef = 1e-30;
    for (int t = 0; t < T; ++t)
      for (int n = 0; n < N; ++n) {
        double sum = c.bias ? bias(n) : 0.0;
        for (int k = 0; k < K; ++k)
          sum += static_cast<double>(roundBf16(x(k, t))) * roundBf16(w(k, n));
        double ref = std::string(c.activation) == "relu" ? std::max(sum, 0.0) : sum;
        maxDiff = std::max(maxDiff, std::abs(y(n, t) - ref));
        maxRef = std::max(maxRef, std::abs(ref));
      }
    EXPECT_LE(maxDiff / maxRef, 1e-5) << "T=" << T << ", " << schedule.str();
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, Bf16GemmKernelTest,
                         ::testing::ValuesIn(test::targetCases(
                             {"x86-64-avx2", "x86-64-avx512", "x86-64-avx512-bf16"}, kCases)),
                         [](const auto &info) { return test::targetCaseName(info); });

} // namespace
