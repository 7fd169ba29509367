//===- HalfTest.cpp - f16 / bf16 conversions -------------------------------===//

#include "runtime/half.h"

#include <gtest/gtest.h>

#include <cmath>

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
