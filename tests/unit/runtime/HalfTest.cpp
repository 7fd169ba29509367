//===- HalfTest.cpp - f16 / bf16 conversions -------------------------------===//

#include "runtime/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace {

TEST(HalfTest, KnownValues) {
  EXPECT_EQ(tmr::halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(tmr::halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(tmr::halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(tmr::halfToFloat(0x0001), std::ldexp(1.0f, -24)); // smallest subnormal
  EXPECT_EQ(tmr::halfToFloat(0x0400), std::ldexp(1.0f, -14)); // smallest normal
  EXPECT_TRUE(std::isinf(tmr::halfToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(tmr::halfToFloat(0x7e00)));
  EXPECT_EQ(tmr::floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(tmr::floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(tmr::floatToHalf(1e6f), 0x7c00); // overflow to infinity
  EXPECT_EQ(tmr::floatToHalf(65504.0f), 0x7bff);
}

TEST(HalfTest, RoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even 1.
  EXPECT_EQ(tmr::floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 lies halfway between 0x3c01 and 0x3c02: even is 0x3c02.
  EXPECT_EQ(tmr::floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above halfway rounds up.
  EXPECT_EQ(tmr::floatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3c01);
  // Subnormals round to the nearest multiple of 2^-24.
  EXPECT_EQ(tmr::floatToHalf(std::ldexp(3.0f, -25)), 0x0002);
}

#if defined(__FLT16_MAX__)
/// The compiler's own binary16 conversion (_Float16, IEEE rounding) is the
/// oracle for the runtime's integer one, which appends f16 cache rows.
uint16_t compilerHalf(float value) {
  _Float16 half = static_cast<_Float16>(value);
  uint16_t bits;
  std::memcpy(&bits, &half, sizeof bits);
  return bits;
}

void expectSameHalf(float value) {
  uint16_t ours = tmr::floatToHalf(value), expected = compilerHalf(value);
  if (std::isnan(value))
    ASSERT_TRUE((ours & 0x7c00u) == 0x7c00u && (ours & 0x3ffu) != 0) << std::hexfloat << value;
  else
    ASSERT_EQ(ours, expected) << std::hexfloat << value;
}

TEST(HalfTest, NarrowingMatchesTheCompilersBinary16) {
  // A spread of every f32 range: every 997th bit pattern.
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 997) {
    float value;
    uint32_t word = static_cast<uint32_t>(bits);
    std::memcpy(&value, &word, sizeof value);
    expectSameHalf(value);
  }
  // Every tie between two neighbouring halves (subnormal, normal, and the one
  // past 65504 that decides overflow), and the floats either side of it.
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    float low = tmr::halfToFloat(static_cast<uint16_t>(h));
    float high = h + 1 < 0x7c00 ? tmr::halfToFloat(static_cast<uint16_t>(h + 1)) : 65536.0f;
    float tie = low + (high - low) / 2;
    for (float value : {tie, std::nextafter(tie, 0.0f), std::nextafter(tie, INFINITY)}) {
      expectSameHalf(value);
      expectSameHalf(-value);
    }
  }
}
#endif

TEST(HalfTest, EveryHalfRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    auto half = static_cast<uint16_t>(bits);
    float value = tmr::halfToFloat(half);
    if (std::isnan(value))
      continue;
    ASSERT_EQ(tmr::floatToHalf(value), half) << "bits 0x" << std::hex << bits;
  }
}

TEST(HalfTest, Bfloat16) {
  EXPECT_EQ(tmr::floatToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(tmr::bfloat16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(tmr::bfloat16ToFloat(0xc040), -3.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(tmr::floatToBfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(tmr::floatToBfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    float value = tmr::bfloat16ToFloat(static_cast<uint16_t>(bits));
    if (!std::isnan(value))
      ASSERT_EQ(tmr::floatToBfloat16(value), bits);
  }
}

TEST(HalfTest, WidenAndNarrow) {
  const float values[] = {0.5f, -1.25f, 3.0f};
  std::vector<uint16_t> half = tmr::narrowFromF32(values, 3, TMR_F16);
  const tmr::AlignedVector<float> expected(values, values + 3);
  tmr::AlignedVector<float> back = tmr::widenToF32(half.data(), 3, TMR_F16);
  EXPECT_EQ(back, expected);
  EXPECT_TRUE(tmr::isAligned(back.data()));
  std::vector<uint16_t> bf = tmr::narrowFromF32(values, 3, TMR_BF16);
  EXPECT_EQ(tmr::widenToF32(bf.data(), 3, TMR_BF16), expected);
}

} // namespace
