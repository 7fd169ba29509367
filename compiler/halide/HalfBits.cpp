//===- HalfBits.cpp - IEEE half precision by integer operations -----------===//

#include "compiler/halide/HalfBits.h"

#include <cmath>

using namespace Halide;

namespace tmc::halide {

namespace {
Expr u32(uint32_t value) { return Internal::make_const(UInt(32), value); }
} // namespace

Expr halfBitsOf(Expr value) {
  Expr bits = reinterpret<uint32_t>(value);
  Expr sign = (bits >> 16) & u32(0x8000);
  Expr magnitude = bits & u32(0x7fffffff);
  // Normal results (|value| >= 2^-14): rebias the exponent and round the 13
  // dropped mantissa bits to nearest even; a carry moves into the exponent,
  // as it should (up to infinity).
  Expr normal = (magnitude - u32(0x38000000) + u32(0xfff) + ((magnitude >> 13) & u32(1))) >> 13;
  // Subnormal results: adding 0.5 leaves a float whose last mantissa bit is
  // 2^-24, the subnormal step, rounded to nearest even by the f32 addition.
  Expr aligned = strict_float(abs(value) + 0.5f);
  Expr subnormal = reinterpret<uint32_t>(aligned) - u32(0x3f000000);
  Expr half = select(magnitude > u32(0x7f800000), u32(0x7e00),  // NaN
                     magnitude >= u32(0x477ff000), u32(0x7c00), // rounds past 65504: infinity
                     magnitude >= u32(0x38800000), normal, subnormal);
  return sign | half;
}

Expr floatOfHalfBits(Expr bits) {
  Expr wide = cast<uint32_t>(bits) & u32(0xffff);
  Expr magnitude = wide & u32(0x7fff);
  // Exponent and mantissa moved into f32's places read 2^-112 times the
  // value (subnormals included), which the exact multiplication restores;
  // f16's all-ones exponent is f32's.
  Expr scaled = strict_float(reinterpret<float>(magnitude << 13) * std::ldexp(1.0f, 112));
  Expr special = reinterpret<float>((magnitude << 13) | u32(0x7f800000));
  Expr absolute = select(magnitude >= u32(0x7c00), special, scaled);
  return reinterpret<float>(reinterpret<uint32_t>(absolute) | ((wide & u32(0x8000)) << 16));
}

Expr bfloatBitsOf(Expr value) {
  Expr bits = reinterpret<uint32_t>(value);
  // The 16 dropped bits rounded to nearest even; a carry moves into the
  // exponent (up to infinity). A NaN stays a (quiet) NaN: rounding its
  // payload could carry it into infinity.
  Expr rounded = (bits + u32(0x7fff) + ((bits >> 16) & u32(1))) >> 16;
  return select((bits & u32(0x7fffffff)) > u32(0x7f800000), (bits >> 16) | u32(0x40), rounded);
}

Expr floatOfBfloatBits(Expr bits) {
  return reinterpret<float>((cast<uint32_t>(bits) & u32(0xffff)) << 16);
}

} // namespace tmc::halide
