//===- ReferenceQ4Test.cpp - The reference's q4 linear against the contract ===//
//
// precision = q4 (docs/spec-language.md): W in ggml's Q4_0 blocks of 32 along
// K with f16 scales, x per row as int8 quantizes it, each block's integer sum
// exact. First answers worked out by hand: one-hot rows of 127 read back each
// dequantized weight exactly, so the block rules show one by one (a negative
// extreme, a tie in magnitude, an all-zero block, a K that 32 does not
// divide, a product landing on an integer, an f16 scale). Then ggml's
// quantize_row_q4_0_ref written out again here, line by line, on random
// blocks with those cases mixed in.
//
//===----------------------------------------------------------------------===//

#include "reference/ReferenceHalf.h"
#include "reference/ReferenceInternal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

using namespace tmc;
using tmc::ref::detail::Matrix;

namespace {

Matrix q4Linear(const Matrix &x, const std::vector<float> &w, const float *b, int64_t out) {
  return ref::detail::linear(x, w.data(), b, out, Precision::Q4);
}

// A row of x and its quantization: m = max|x| = 127, so xq = x rounded half
// to even (-63.5 -> -64, 2.5 -> 2) and a_t = 1. W's one block (K = 4 is
// padded to 32): mx = -2, d = 0.25, id = 4, q = trunc(4w + 8.5) = 12, 0, 10,
// 8, i.e. q - 8 = 4, -8, 2, 0: the weights exactly. The block sum is
// 4 * 127 - 8 * 2 + 2 * (-64) + 0 = 364; y = 364 * 0.25 + 0.5.
TEST(ReferenceQ4, HandWorkedLinear) {
  Matrix x(1, 4);
  x.data = {127, 2.5, -63.5, 1};
  const std::vector<float> w = {1.0f, -2.0f, 0.5f, 0.0f};
  const float bias = 0.5f;
  Matrix y = q4Linear(x, w, &bias, 1);
  EXPECT_EQ(y.at(0, 0), 91.5);
  // A row of zeros quantizes to zeros with a_t = 0: the bias alone.
  Matrix zero(1, 4);
  EXPECT_EQ(q4Linear(zero, w, &bias, 1).at(0, 0), 0.5);
}

// One channel per case, K = 40: a full block and one of 8 padded to 32. Row
// k of x is 127 at k and 0 elsewhere, so y[k][n] / 127 is W[n][k] as q4
// holds it, (q - 8) * ds.
TEST(ReferenceQ4, OneHotRowsReadEachBlockRule) {
  constexpr int64_t K = 40, N = 4;
  std::vector<float> w(N * K, 0.0f);
  auto at = [&](int64_t n, int64_t k) -> float & { return w[static_cast<size_t>(n * K + k)]; };
  // Channel 0: +8 before -8, so mx = 8, d = -1, id = -1: 8 -> q 0 (8 back),
  // -8 -> 16.5 clamped to 15 (-7). 0.5 lands on 8.0 exactly (q 8: 0), -0.5
  // on 9.0 (q 9: -1), 1.5 on 7.0 (q 7: 1). Its second block is all zero.
  at(0, 0) = 8, at(0, 1) = -8, at(0, 2) = 0.5f, at(0, 3) = -0.5f, at(0, 4) = 1.5f;
  // Channel 1: the same tie the other way: mx = -8, d = 1, id = 1: -8 -> q 0
  // (-8), 8 -> 16.5 -> 15 (7), 0.5 -> 9.0 (1), -0.5 -> 8.0 (0), 1.5 -> 10.0
  // (2). Second block (k 32..39): mx = -3, negative, d = 0.375, exact in
  // f16; 1 * (1/0.375 in f32) + 8.5 truncates to 11: 3 * 0.375.
  at(1, 0) = -8, at(1, 1) = 8, at(1, 2) = 0.5f, at(1, 3) = -0.5f, at(1, 4) = 1.5f;
  at(1, 32) = 1, at(1, 33) = -3;
  // Channel 2: d = -(8 + 2^-8 + 2^-10) / 8 = -(1 + 2^-11 + 2^-13) rounds to
  // f16 as -(1 + 2^-10), so the extreme comes back as 8 * (1 + 2^-10), not
  // as itself. Second block: mx = 2^-20, d = -2^-23 (an f16 subnormal,
  // exact): 2^-20 comes back.
  at(2, 0) = 8 + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -10);
  at(2, 39) = std::ldexp(1.0f, -20);
  // Channel 3: mx = 2^-23, d = -2^-26, below half f16's smallest subnormal:
  // ds = 0 and the block holds zeros, though q is 0 for the extreme.
  at(3, 35) = std::ldexp(1.0f, -23);

  Matrix x(K, K);
  for (int64_t k = 0; k < K; ++k)
    x.at(k, k) = 127;
  Matrix y = q4Linear(x, w, nullptr, N);
  auto weight = [&](int64_t n, int64_t k) { return y.at(k, n) / 127; };
  const double expected[][5] = {{8, -7, 0, -1, 1}, {-8, 7, 1, 0, 2}};
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t k = 0; k < 5; ++k)
      EXPECT_EQ(weight(n, k), expected[n][k]) << "channel " << n << ", k " << k;
  for (int64_t k = 32; k < K; ++k)
    EXPECT_EQ(weight(0, k), 0.0) << k;
  EXPECT_EQ(weight(1, 32), 3 * 0.375);
  EXPECT_EQ(weight(1, 33), -3.0);
  EXPECT_EQ(weight(2, 0), 8 * (1 + std::ldexp(1.0, -10)));
  EXPECT_EQ(weight(2, 39), std::ldexp(1.0, -20));
  EXPECT_EQ(weight(3, 35), 0.0);
  // Zeros elsewhere in the blocks stay zero (q = 8).
  EXPECT_EQ(weight(0, 20), 0.0);
  EXPECT_EQ(weight(2, 1), 0.0);
}

/// ggml's fp32 -> fp16 conversion (GGML_COMPUTE_FP32_TO_FP16's portable
/// path, after Maratyszcza's FP16 library), kept apart from the reference's
/// roundToBinary16.
uint16_t fp32ToFp16(float f) {
  auto bitsOf = [](float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return bits;
  };
  auto fromBits = [](uint32_t bits) {
    float v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  };
  const float scaleToInf = 0x1.0p+112f, scaleToZero = 0x1.0p-110f;
  float base = (std::fabs(f) * scaleToInf) * scaleToZero;
  const uint32_t word = bitsOf(f), shl1 = word + word, sign = word & 0x80000000u;
  uint32_t bias = shl1 & 0xFF000000u;
  if (bias < 0x71000000u)
    bias = 0x71000000u;
  base = fromBits((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = bitsOf(base);
  const uint32_t nonsign = ((bits >> 13) & 0x00007C00u) + (bits & 0x00000FFFu);
  return static_cast<uint16_t>((sign >> 16) | (shl1 > 0xFF000000u ? 0x7E00u : nonsign));
}

/// quantize_row_q4_0_ref for one row: q - 8 per k and float(ds) per block.
/// This file is compiled with -ffp-contract=off, so x * id + 8.5f rounds
/// twice, as ggml's C does.
void quantizeQ4(const float *row, int64_t count, std::vector<int> &values,
                std::vector<float> &scales) {
  for (int64_t block = 0; block * 32 < count; ++block) {
    float xs[32] = {}; // the padding is zeros
    for (int64_t j = 0; j < 32 && block * 32 + j < count; ++j)
      xs[j] = row[block * 32 + j];
    float amax = 0.0f, max = 0.0f;
    for (float v : xs)
      if (amax < std::fabs(v)) {
        amax = std::fabs(v);
        max = v;
      }
    const float d = max / -8;
    const float id = d ? 1.0f / d : 0.0f;
    scales.push_back(static_cast<float>(ref::binary16Value(fp32ToFp16(d))));
    for (int64_t j = 0; j < 32 && block * 32 + j < count; ++j)
      values.push_back(std::min(15, static_cast<int>(static_cast<int8_t>(xs[j] * id + 8.5f))) - 8);
  }
}

/// int8's activation rule: xq = clamp(round_half_even(x * (127 / m))), a = m / 127.
std::vector<int> quantizeActivations(const float *row, int64_t count, float &scale) {
  float m = 0;
  for (int64_t k = 0; k < count; ++k)
    m = std::max(m, std::fabs(row[k]));
  const float inverse = m > 0 ? 127.0f / m : 0.0f;
  std::vector<int> out;
  for (int64_t k = 0; k < count; ++k)
    out.push_back(static_cast<int>(std::clamp(std::nearbyint(row[k] * inverse), -127.0f, 127.0f)));
  scale = m / 127.0f;
  return out;
}

// K = 77: two full blocks and one of 13. Random weights over magnitudes
// 2^-12 to 2^4 (so the f16 scales round, some to subnormals), with these
// blocks forced: a negative extreme, +v then -v and -v then +v of the same
// magnitude, an all-zero block, and values at exact half steps of a power
// of two scale. Rows: random, one with a single large value, all zero.
TEST(ReferenceQ4, MatchesGgmlQuantizerWrittenApart) {
  constexpr int64_t K = 77, N = 6, T = 4;
  std::mt19937 rng(20261126);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-12, 4);
  std::vector<float> w(N * K);
  for (float &v : w)
    v = std::ldexp(unit(rng), exponent(rng));
  auto row = [&](int64_t n) { return w.data() + n * K; };
  row(0)[5] = -40.0f;                        // block 0: negative extreme
  row(1)[3] = 30.0f, row(1)[9] = -30.0f;     // +v first
  row(1)[40] = -30.0f, row(1)[50] = 30.0f;   // -v first
  std::fill(row(2) + 32, row(2) + 64, 0.0f); // an all-zero block
  std::fill(row(3), row(3) + 32, 0.0f);      // mx = -8: d = 1, id = 1,
  row(3)[0] = -8.0f;                         // and w + 8.5 lands on an
  for (int j = 1; j < 16; ++j)               // integer at every half step
    row(3)[j] = -7.5f + j;
  std::fill(row(4) + 64, row(4) + K, 0.0f); // a partial block of zeros
  row(5)[70] = 3 * std::ldexp(1.0f, -22);   // d = -1.5 * 2^-24: a tie,
                                            // to the subnormal -2^-23
  std::fill(row(5) + 64, row(5) + 70, 0.0f);
  std::fill(row(5) + 71, row(5) + K, 0.0f);

  Matrix x(T, K);
  for (int64_t t = 0; t < 2; ++t)
    for (int64_t k = 0; k < K; ++k)
      x.at(t, k) = std::ldexp(unit(rng), exponent(rng));
  x.at(2, 11) = 1000; // one large value: every other xq small or 0
  std::vector<float> bias(N);
  for (float &v : bias)
    v = unit(rng);

  Matrix y = q4Linear(x, w, bias.data(), N);
  for (int64_t t = 0; t < T; ++t) {
    std::vector<float> xs(K);
    for (int64_t k = 0; k < K; ++k)
      xs[static_cast<size_t>(k)] = static_cast<float>(x.at(t, k));
    float scale = 0;
    const std::vector<int> xq = quantizeActivations(xs.data(), K, scale);
    for (int64_t n = 0; n < N; ++n) {
      std::vector<int> values;
      std::vector<float> scales;
      quantizeQ4(row(n), K, values, scales);
      double sum = 0;
      for (size_t block = 0; block < scales.size(); ++block) {
        int blockSum = 0;
        for (size_t k = block * 32; k < std::min<size_t>(K, block * 32 + 32); ++k)
          blockSum += values[k] * xq[k];
        sum += double(blockSum) * scales[block];
      }
      const double expected = sum * scale + bias[static_cast<size_t>(n)];
      EXPECT_NEAR(y.at(t, n), expected, 1e-12 * (std::fabs(expected) + 1))
          << "row " << t << ", channel " << n;
    }
  }
  // The all-zero row: the bias alone.
  for (int64_t n = 0; n < N; ++n)
    EXPECT_EQ(y.at(3, n), bias[static_cast<size_t>(n)]);
}

} // namespace
