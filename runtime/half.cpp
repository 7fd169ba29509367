//===- half.cpp - f16 and bf16 weights as f32 -----------------------------===//

#include "runtime/half.h"

#include <cmath>
#include <cstring>

namespace tmr {

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -24); // zero or subnormal
  else if (exponent == 31)
    magnitude = mantissa ? std::nanf("") : INFINITY;
  else
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  uint32_t out;
  std::memcpy(&out, &magnitude, sizeof out);
  out |= sign;
  float result;
  std::memcpy(&result, &out, sizeof result);
  return result;
}

uint16_t floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  float magnitude = std::fabs(value);
  if (std::isnan(value))
    return static_cast<uint16_t>(sign | 0x7e00u);
  if (magnitude >= 65520.0f) // rounds past the largest half (65504)
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude < std::ldexp(1.0f, -14)) {
    // Subnormal: a multiple of 2^-24, rounded to nearest even by nearbyint.
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(std::ldexp(magnitude, 24))));
  }
  int exponent;
  float fraction = std::frexp(magnitude, &exponent); // magnitude = fraction * 2^exponent, [0.5, 1)
  uint32_t mantissa = static_cast<uint32_t>(std::nearbyint(std::ldexp(fraction, 11))); // [1024, 2048]
  if (mantissa == 2048) {
    mantissa = 1024;
    ++exponent;
  }
  uint32_t biased = static_cast<uint32_t>(exponent - 1 + 15);
  if (biased >= 31)
    return static_cast<uint16_t>(sign | 0x7c00u);
  return static_cast<uint16_t>(sign | (biased << 10) | (mantissa & 0x3ffu));
}

float bfloat16ToFloat(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float result;
  std::memcpy(&result, &wide, sizeof result);
  return result;
}

uint16_t floatToBfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

AlignedVector<float> widenToF32(const void *data, size_t count, tmr_dtype dtype) {
  AlignedVector<float> out(count);
  const auto *words = static_cast<const uint16_t *>(data);
  for (size_t i = 0; i < count; ++i) {
    switch (dtype) {
    case TMR_F32: out[i] = static_cast<const float *>(data)[i]; break;
    case TMR_F16: out[i] = halfToFloat(words[i]); break;
    case TMR_BF16: out[i] = bfloat16ToFloat(words[i]); break;
    // Pre-quantized values are never widened (their scales say what they mean).
    case TMR_I8:
    case TMR_U8:
      out[i] = 0;
      break;
    }
  }
  return out;
}

std::vector<uint16_t> narrowFromF32(const float *values, size_t count, tmr_dtype dtype) {
  std::vector<uint16_t> out(count);
  for (size_t i = 0; i < count; ++i)
    out[i] = dtype == TMR_BF16 ? floatToBfloat16(values[i]) : floatToHalf(values[i]);
  return out;
}

} // namespace tmr
