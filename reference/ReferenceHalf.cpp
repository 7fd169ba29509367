//===- ReferenceHalf.cpp - The narrow weight formats, read apart ----------===//
//
// Each value is built as (integer significand) * 2^(exponent) with ldexp, which
// is exact in double for every finite value of both formats.
//
//===----------------------------------------------------------------------===//

#include "reference/ReferenceHalf.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tmc::ref {

namespace {

/// A 16-bit float with `exponentBits` exponent bits and `fractionBits`
/// fraction bits (1 + exponentBits + fractionBits == 16), IEEE 754 style.
double narrowFloatValue(uint16_t bits, int exponentBits, int fractionBits) {
  const bool negative = (bits >> 15) != 0;
  const int maxExponent = (1 << exponentBits) - 1;
  const int bias = maxExponent / 2;
  const int exponent = (bits >> fractionBits) & maxExponent;
  const int fraction = bits & ((1 << fractionBits) - 1);
  double magnitude;
  if (exponent == maxExponent) {
    if (fraction != 0)
      return std::numeric_limits<double>::quiet_NaN();
    magnitude = std::numeric_limits<double>::infinity();
  } else if (exponent == 0) {
    // Subnormal (or zero): no implicit leading 1, exponent fixed at 1 - bias.
    magnitude = std::ldexp(static_cast<double>(fraction), 1 - bias - fractionBits);
  } else {
    const int significand = (1 << fractionBits) | fraction;
    magnitude = std::ldexp(static_cast<double>(significand), exponent - bias - fractionBits);
  }
  // copysign keeps -0 distinct from +0, as the formats do.
  return std::copysign(magnitude, negative ? -1.0 : 1.0);
}

} // namespace

double binary16Value(uint16_t bits) { return narrowFloatValue(bits, 5, 10); }

double bfloat16Value(uint16_t bits) { return narrowFloatValue(bits, 8, 7); }

double roundToBfloat16(double value) {
  if (value == 0 || !std::isfinite(value))
    return value;
  int exponent;
  std::frexp(value, &exponent); // |value| = m * 2^exponent, m in [0.5, 1)
  // The quantum: 2^(exponent - 8) keeps 8 significant bits; bf16's smallest
  // normal is 2^-126, below which the quantum stays 2^-133.
  const int quantum = std::max(exponent - 8, -133);
  // nearbyint rounds ties to even under the default rounding mode; the
  // scaled value is an exact double.
  return std::ldexp(std::nearbyint(std::ldexp(value, -quantum)), quantum);
}

double roundToBinary16(double value) {
  if (value == 0 || !std::isfinite(value))
    return value;
  int exponent;
  std::frexp(value, &exponent);
  // 11 significant bits; binary16's smallest normal is 2^-14, below which
  // the quantum stays 2^-24.
  const int quantum = std::max(exponent - 11, -24);
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(value, -quantum)), quantum);
  constexpr double kLargest = 65504; // (2 - 2^-10) * 2^15
  return std::fabs(rounded) > kLargest
             ? std::copysign(std::numeric_limits<double>::infinity(), value)
             : rounded;
}

} // namespace tmc::ref
