//===- half.h - f16 and bf16 weights as f32 ---------------------*- C++ -*-===//
//
// A model's dtype is its weights' storage type; kernels compute in f32
// (docs/spec-language.md), so f16 and bf16 tensors are widened once, at load.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/aligned.h"
#include "runtime/tmr_abi.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace tmr {

/// IEEE binary16 to float, exactly (subnormals, infinities and NaN included).
float halfToFloat(uint16_t bits);
/// bfloat16 to float, exactly.
float bfloat16ToFloat(uint16_t bits);

// The narrowing conversions are inline and branch-free, so that a loop over a
// row of keys or values (a kv_cache = f16 | bf16 cache's append) vectorizes.

/// float to IEEE binary16, rounding to nearest even: subnormals, overflow to
/// infinity (from 65520 up) and NaN (kept quiet) as IEEE 754 rounds them.
inline uint16_t floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint32_t sign = (bits >> 16) & 0x8000u, magnitude = bits & 0x7fffffffu;
  // Normal results (|value| >= 2^-14): rebias the exponent and round the 13
  // dropped mantissa bits to nearest even; a carry moves into the exponent.
  uint32_t normal = (magnitude - 0x38000000u + 0xfffu + ((magnitude >> 13) & 1u)) >> 13;
  // Subnormal results: adding 0.5 leaves a float whose last mantissa bit is
  // 2^-24, the subnormal step, rounded to nearest even by the addition.
  float aligned = std::fabs(value) + 0.5f;
  uint32_t alignedBits;
  std::memcpy(&alignedBits, &aligned, sizeof alignedBits);
  uint32_t subnormal = alignedBits - 0x3f000000u;
  uint32_t half = magnitude > 0x7f800000u    ? 0x7e00u // NaN
                  : magnitude >= 0x477ff000u ? 0x7c00u // rounds past 65504: infinity
                  : magnitude >= 0x38800000u ? normal
                                             : subnormal;
  return static_cast<uint16_t>(sign | half);
}

/// float to bfloat16, rounding to nearest even; NaN stays a (quiet) NaN.
inline uint16_t floatToBfloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(nan ? (bits >> 16) | 0x40u : rounded);
}

/// Widens `count` elements of `dtype` at `data` to f32, aligned for the kernels.
AlignedVector<float> widenToF32(const void *data, size_t count, tmr_dtype dtype);
/// floatToHalf of `count` values, eight at a time where the CPU has F16C
/// (the same bits): a decoding step of GPT-2 small at 16 sequences appends
/// 384 cache rows of 768 in f16, 0.3 ms of a 28 ms step in floatToHalf alone.
void narrowToHalf(const float *in, uint16_t *out, size_t count);
/// Narrows f32 values to `dtype` (F16 or BF16), as little-endian 16-bit words.
std::vector<uint16_t> narrowFromF32(const float *values, size_t count, tmr_dtype dtype);

} // namespace tmr
