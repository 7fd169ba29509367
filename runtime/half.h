//===- half.h - f16 and bf16 weights as f32 ---------------------*- C++ -*-===//
//
// A model's dtype is its weights' storage type; kernels compute in f32
// (docs/spec-language.md), so f16 and bf16 tensors are widened once, at load.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/aligned.h"
#include "runtime/tmr_abi.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tmr {

/// IEEE binary16 to float, exactly (subnormals, infinities and NaN included).
float halfToFloat(uint16_t bits);
/// float to IEEE binary16, rounding to nearest even (overflow gives infinity).
uint16_t floatToHalf(float value);
/// bfloat16 to float, exactly.
float bfloat16ToFloat(uint16_t bits);
/// float to bfloat16, rounding to nearest even.
uint16_t floatToBfloat16(float value);

/// Widens `count` elements of `dtype` at `data` to f32, aligned for the kernels.
AlignedVector<float> widenToF32(const void *data, size_t count, tmr_dtype dtype);
/// Narrows f32 values to `dtype` (F16 or BF16), as little-endian 16-bit words.
std::vector<uint16_t> narrowFromF32(const float *values, size_t count, tmr_dtype dtype);

} // namespace tmr
