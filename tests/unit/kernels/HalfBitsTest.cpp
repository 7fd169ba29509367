//===- HalfBitsTest.cpp - f16 and bf16 conversions by integer operations ---===//
//
// compiler/halide/HalfBits.h against Halide's own float16_t and bfloat16_t
// (software, round to nearest even): every one of the 65536 half and bf16
// bit patterns widened (NaNs stay NaN), and f32 values around every half
// and bf16 step narrowed: normal and subnormal results, ties both ways, the
// overflow to infinity.
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/HalfBits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace Halide;

namespace {

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

TEST(HalfBits, WidensEveryHalfExactly) {
  Buffer<uint16_t> halves(65536);
  for (int i = 0; i < 65536; ++i)
    halves(i) = static_cast<uint16_t>(i);
  Var i("i");
  Func widened("widened");
  widened(i) = tmc::halide::floatOfHalfBits(halves(i));
  widened.vectorize(i, 16);
  Buffer<float> out = widened.realize({65536}, get_jit_target_from_environment());
  for (int h = 0; h < 65536; ++h) {
    const float want = static_cast<float>(float16_t::make_from_bits(static_cast<uint16_t>(h)));
    if (std::isnan(want))
      ASSERT_TRUE(std::isnan(out(h))) << "half bits " << h;
    else
      ASSERT_EQ(bitsOf(out(h)), bitsOf(want)) << "half bits " << h;
  }
}

TEST(HalfBits, NarrowsToTheNearestHalfTiesToEven) {
  // Each half value, the midpoints to its neighbours and an f32 ulp either
  // side of them, both signs, and values past the largest half.
  std::vector<float> values;
  for (int h = 0; h < 0x7c00; ++h) {
    const float low = static_cast<float>(float16_t::make_from_bits(static_cast<uint16_t>(h)));
    const float high = static_cast<float>(float16_t::make_from_bits(static_cast<uint16_t>(h + 1)));
    const float mid = low + (high - low) / 2;
    for (float v : {low, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, high)})
      values.insert(values.end(), {v, -v});
  }
  for (float v : {65504.0f, 65519.0f, 65520.0f, 1e6f, INFINITY, NAN})
    values.insert(values.end(), {v, -v});
  Buffer<float> input(static_cast<int>(values.size()));
  for (size_t k = 0; k < values.size(); ++k)
    input(static_cast<int>(k)) = values[k];
  Var i("i");
  Func narrowed("narrowed");
  narrowed(i) = tmc::halide::halfBitsOf(input(i));
  narrowed.vectorize(i, 16, TailStrategy::GuardWithIf);
  Buffer<uint32_t> out = narrowed.realize({input.width()}, get_jit_target_from_environment());
  for (int k = 0; k < input.width(); ++k) {
    const float16_t want(input(k));
    if (want.is_nan())
      ASSERT_TRUE(float16_t::make_from_bits(static_cast<uint16_t>(out(k))).is_nan())
          << input(k);
    else
      ASSERT_EQ(out(k), want.to_bits()) << "value " << input(k);
  }
}

TEST(HalfBits, WidensEveryBfloatExactly) {
  Buffer<uint16_t> bfloats(65536);
  for (int i = 0; i < 65536; ++i)
    bfloats(i) = static_cast<uint16_t>(i);
  Var i("i");
  Func widened("widened");
  widened(i) = tmc::halide::floatOfBfloatBits(bfloats(i));
  widened.vectorize(i, 16);
  Buffer<float> out = widened.realize({65536}, get_jit_target_from_environment());
  for (int b = 0; b < 65536; ++b) {
    const float want = static_cast<float>(bfloat16_t::make_from_bits(static_cast<uint16_t>(b)));
    if (std::isnan(want))
      ASSERT_TRUE(std::isnan(out(b))) << "bf16 bits " << b;
    else
      ASSERT_EQ(bitsOf(out(b)), bitsOf(want)) << "bf16 bits " << b;
  }
}

TEST(HalfBits, NarrowsToTheNearestBfloatTiesToEven) {
  // Every 97th finite bf16 value (all exponents, both mantissa parities),
  // the midpoints to its neighbour and an f32 ulp either side, both signs;
  // the overflow past the largest bf16, infinities and NaN.
  std::vector<float> values;
  for (int b = 0; b < 0x7f7f; b += 97) {
    const float low = static_cast<float>(bfloat16_t::make_from_bits(static_cast<uint16_t>(b)));
    const float high = static_cast<float>(bfloat16_t::make_from_bits(static_cast<uint16_t>(b + 1)));
    const float mid = low + (high - low) / 2;
    for (float v : {low, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, high)})
      values.insert(values.end(), {v, -v});
  }
  const float largest = static_cast<float>(bfloat16_t::make_from_bits(0x7f7f));
  for (float v : {largest, std::nextafter(INFINITY, 0.0f), INFINITY, NAN})
    values.insert(values.end(), {v, -v});
  Buffer<float> input(static_cast<int>(values.size()));
  for (size_t k = 0; k < values.size(); ++k)
    input(static_cast<int>(k)) = values[k];
  Var i("i");
  Func narrowed("narrowed");
  narrowed(i) = tmc::halide::bfloatBitsOf(input(i));
  narrowed.vectorize(i, 16, TailStrategy::GuardWithIf);
  Buffer<uint32_t> out = narrowed.realize({input.width()}, get_jit_target_from_environment());
  for (int k = 0; k < input.width(); ++k) {
    const bfloat16_t want(input(k));
    ASSERT_LE(out(k), 0xffffu) << input(k);
    if (want.is_nan())
      ASSERT_TRUE(bfloat16_t::make_from_bits(static_cast<uint16_t>(out(k))).is_nan()) << input(k);
    else
      ASSERT_EQ(out(k), want.to_bits()) << "value " << input(k);
  }
}

} // namespace
