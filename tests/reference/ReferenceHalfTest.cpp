//===- ReferenceHalfTest.cpp - The reference's reading of f16 and bf16 ----===//
//
// reference/ReferenceHalf.h against bit patterns worked out by hand from the
// IEEE 754 binary16 and bfloat16 layouts (never from runtime/half.h, which is
// what these widenings exist to check), then ReferenceWeights reading a file
// of such words: each tensor must come back as exactly those values.
//
//===----------------------------------------------------------------------===//

#include "reference/ReferenceHalf.h"
#include "reference/ReferenceWeights.h"
#include "runtime/safetensors.h"
#include "tests/reference/ReferenceTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <limits>
#include <unistd.h>

using namespace tmc;
using namespace tmc::reftest;

namespace {

struct KnownWord {
  uint16_t bits;
  double value;
};

const double inf = std::numeric_limits<double>::infinity();

// binary16: value = (1024 + fraction) * 2^(exponent - 25), subnormals
// fraction * 2^-24.
const KnownWord binary16Words[] = {
    {0x3c00, 1.0},                          // exponent 15, fraction 0
    {0xbc00, -1.0},                         // sign set
    {0xc000, -2.0},                         // exponent 16
    {0x3555, 1365.0 / 4096.0},              // (1024 + 341) * 2^-12, f16's 1/3
    {0x7bff, 65504.0},                      // largest finite: 2047 * 2^5
    {0x0400, std::ldexp(1.0, -14)},         // smallest normal
    {0x03ff, std::ldexp(1023.0, -24)},      // largest subnormal
    {0x0001, std::ldexp(1.0, -24)},         // smallest subnormal
    {0x8001, -std::ldexp(1.0, -24)},        // negative subnormal
    {0x0000, 0.0},
    {0x7c00, inf},
    {0xfc00, -inf},
};

// bfloat16: value = (128 + fraction) * 2^(exponent - 134), subnormals
// fraction * 2^-133.
const KnownWord bfloat16Words[] = {
    {0x3f80, 1.0},                          // exponent 127, fraction 0
    {0xbf80, -1.0},
    {0x4049, 201.0 / 64.0},                 // (128 + 73) * 2^-6 = 3.140625
    {0x7f7f, std::ldexp(255.0, 120)},       // largest finite
    {0x0080, std::ldexp(1.0, -126)},        // smallest normal
    {0x007f, std::ldexp(127.0, -133)},      // largest subnormal
    {0x0001, std::ldexp(1.0, -133)},        // smallest subnormal
    {0x8001, -std::ldexp(1.0, -133)},
    {0x0000, 0.0},
    {0x7f80, inf},
    {0xff80, -inf},
};

TEST(ReferenceHalf, Binary16KnownWords) {
  for (const KnownWord &word : binary16Words)
    EXPECT_EQ(ref::binary16Value(word.bits), word.value) << std::hex << word.bits;
}

TEST(ReferenceHalf, Bfloat16KnownWords) {
  for (const KnownWord &word : bfloat16Words)
    EXPECT_EQ(ref::bfloat16Value(word.bits), word.value) << std::hex << word.bits;
}

TEST(ReferenceHalf, NaNsAndSignedZeros) {
  // An all-ones exponent with any nonzero fraction is NaN, either sign.
  for (uint16_t bits : {0x7e00, 0x7c01, 0xfe00, 0x7fff})
    EXPECT_TRUE(std::isnan(ref::binary16Value(bits))) << std::hex << bits;
  for (uint16_t bits : {0x7fc0, 0x7f81, 0xffc0, 0x7fff})
    EXPECT_TRUE(std::isnan(ref::bfloat16Value(bits))) << std::hex << bits;
  // -0 keeps its sign (1 / -0 is -inf).
  EXPECT_TRUE(std::signbit(ref::binary16Value(0x8000)));
  EXPECT_TRUE(std::signbit(ref::bfloat16Value(0x8000)));
  EXPECT_FALSE(std::signbit(ref::binary16Value(0x0000)));
}

TEST(ReferenceHalf, Bfloat16IsTheTopHalfOfBinary32) {
  // A float whose low 16 bits are zero is exactly its bfloat16 word.
  for (float value : {1.0f, -0.15625f, 3.0e38f, 1.0e-38f}) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    bits &= 0xffff0000u;
    float truncated;
    std::memcpy(&truncated, &bits, sizeof truncated);
    EXPECT_EQ(ref::bfloat16Value(static_cast<uint16_t>(bits >> 16)),
              static_cast<double>(truncated));
  }
}

/// Writes every tensor `spec` needs as 16-bit words cycling through `words`
/// (f32 tensors, if any, as zeros), opens the file with ReferenceWeights and
/// checks each looked-up value against the word's known value.
void expectFileReadsAsKnownValues(DType dtype, const KnownWord *words, size_t wordCount) {
  ModelSpec spec = resolveLayers(tinySpec(4, 1, 4));
  spec.dtype = dtype;
  std::vector<TensorSpec> tensors = ref::requiredTensors(spec);
  std::vector<std::vector<uint16_t>> narrowData;
  std::vector<std::vector<float>> wideData;
  std::vector<tmr::TensorToWrite> toWrite;
  size_t narrowTensors = 0;
  for (const TensorSpec &tensor : tensors) {
    int64_t count = 1;
    for (int64_t extent : tensor.shape)
      count *= extent;
    tmr_dtype storage = storageDType(tensor.dtype);
    if (storage == TMR_F32) {
      wideData.emplace_back(static_cast<size_t>(count), 0.0f);
      toWrite.push_back({tensor.name, storage, tensor.shape, wideData.back().data()});
      continue;
    }
    ++narrowTensors;
    std::vector<uint16_t> bits(static_cast<size_t>(count));
    for (size_t k = 0; k < bits.size(); ++k)
      bits[k] = words[k % wordCount].bits; // host order: little-endian on every target
    narrowData.push_back(std::move(bits));
    toWrite.push_back({tensor.name, storage, tensor.shape, narrowData.back().data()});
  }
  ASSERT_GT(narrowTensors, 0u);

  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("tmc-reference-half-" + std::to_string(getpid()) + "-" +
                                std::to_string(static_cast<int>(dtype)) + ".safetensors");
  std::string error;
  ASSERT_TRUE(tmr::writeSafetensors(path.string(), toWrite, &error)) << error;
  auto weights = ref::ReferenceWeights::open(spec, path.string(), &error);
  std::filesystem::remove(path);
  ASSERT_TRUE(weights) << error;
  ref::WeightLookup lookup = weights->lookup();
  for (size_t t = 0; t < tensors.size(); ++t) {
    if (toWrite[t].dtype == TMR_F32)
      continue;
    const float *values = lookup(tensors[t].name);
    ASSERT_NE(values, nullptr) << tensors[t].name;
    size_t count = 1;
    for (int64_t extent : tensors[t].shape)
      count *= static_cast<size_t>(extent);
    for (size_t k = 0; k < count; ++k)
      ASSERT_EQ(static_cast<double>(values[k]), words[k % wordCount].value)
          << tensors[t].name << "[" << k << "]";
  }
}

TEST(ReferenceHalf, WeightFileWidensF16Words) {
  expectFileReadsAsKnownValues(DType::F16, binary16Words, std::size(binary16Words));
}

TEST(ReferenceHalf, WeightFileWidensBf16Words) {
  expectFileReadsAsKnownValues(DType::BF16, bfloat16Words, std::size(bfloat16Words));
}

// Rounding to bf16 (what a bf16 GEMM does to its inputs), from the format's
// definition: 8 significant bits, nearest, ties to the even significand.
TEST(ReferenceHalf, RoundsToNearestBfloat16TiesToEven) {
  const double ulp1 = std::ldexp(1.0, -7); // bf16's spacing in [1, 2)
  EXPECT_EQ(ref::roundToBfloat16(1.0), 1.0);
  EXPECT_EQ(ref::roundToBfloat16(1.0 + ulp1 / 2), 1.0);                      // tie: even 1.0
  EXPECT_EQ(ref::roundToBfloat16(1.0 + 3 * ulp1 / 2), 1.0 + 2 * ulp1);       // tie: even up
  EXPECT_EQ(ref::roundToBfloat16(1.0 + ulp1 / 2 + 1e-9), 1.0 + ulp1);        // past the tie
  EXPECT_EQ(ref::roundToBfloat16(-(1.0 + ulp1 / 2 + 1e-9)), -(1.0 + ulp1));  // sign kept
  EXPECT_EQ(ref::roundToBfloat16(3.14159265), 3.140625);                     // 0x4049
  EXPECT_EQ(ref::roundToBfloat16(0.1), 0.10009765625);                       // 0x3dcd
  EXPECT_EQ(ref::roundToBfloat16(255.5), 256.0);                             // carries to 2^8
  // Below 2^-126 the quantum stays 2^-133 (subnormals).
  EXPECT_EQ(ref::roundToBfloat16(std::ldexp(1.0, -133) * 2.75), std::ldexp(1.0, -133) * 3);
  EXPECT_EQ(ref::roundToBfloat16(0.0), 0.0);
  EXPECT_TRUE(std::isinf(ref::roundToBfloat16(INFINITY)));
  // Every value it returns is a bf16 word's value.
  for (double v : {3.14159265, 0.1, 1e-3, 123456.0, -7.77})
    EXPECT_EQ(ref::roundToBfloat16(v), ref::roundToBfloat16(ref::roundToBfloat16(v))) << v;
}

// Rounding to binary16 (how q4 stores each block's scale), from the format's
// definition: 11 significant bits, nearest, ties to the even significand,
// subnormals below 2^-14, infinity past 65504.
TEST(ReferenceHalf, RoundsToNearestBinary16TiesToEven) {
  const double ulp1 = std::ldexp(1.0, -10);             // binary16's spacing in [1, 2)
  EXPECT_EQ(ref::roundToBinary16(1.0 + ulp1 / 2), 1.0); // tie: even 1.0
  EXPECT_EQ(ref::roundToBinary16(1.0 + 3 * ulp1 / 2), 1.0 + 2 * ulp1); // tie: even up
  EXPECT_EQ(ref::roundToBinary16(1.0 + ulp1 / 2 + 1e-9), 1.0 + ulp1);  // past the tie
  EXPECT_EQ(ref::roundToBinary16(-(1.0 + ulp1 / 2 + 1e-9)), -(1.0 + ulp1));
  EXPECT_EQ(ref::roundToBinary16(0.1), 0.0999755859375); // 0x2e66
  EXPECT_EQ(ref::roundToBinary16(2047.5), 2048.0);       // carries to 2^11
  // The largest finite value, and where rounding up leaves the format.
  EXPECT_EQ(ref::roundToBinary16(65504.0), 65504.0);
  EXPECT_EQ(ref::roundToBinary16(65519.0), 65504.0);
  EXPECT_TRUE(std::isinf(ref::roundToBinary16(65520.0)));
  EXPECT_LT(ref::roundToBinary16(-65520.0), 0);
  // Below 2^-14 the quantum stays 2^-24; half of it is a tie to zero.
  const double quantum = std::ldexp(1.0, -24);
  EXPECT_EQ(ref::roundToBinary16(2.75 * quantum), 3 * quantum);
  EXPECT_EQ(ref::roundToBinary16(quantum), quantum);
  EXPECT_EQ(ref::roundToBinary16(quantum / 2), 0.0);
  EXPECT_EQ(ref::roundToBinary16(1.5 * quantum), 2 * quantum);
  EXPECT_EQ(ref::roundToBinary16(0.0), 0.0);
  // Every value it returns is a binary16 word's value.
  for (const KnownWord &word : binary16Words) {
    if (std::isfinite(word.value))
      EXPECT_EQ(ref::roundToBinary16(word.value), word.value) << word.value;
  }
}

} // namespace
