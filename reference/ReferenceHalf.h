//===- ReferenceHalf.h - The narrow weight formats, read apart --*- C++ -*-===//
//
// The reference's own reading of f16 (IEEE 754 binary16) and bf16 (bfloat16)
// weights, written from the formats' definitions rather than taken from the
// runtime (runtime/half.h), so a wrong widening in the product shows up as a
// mismatch against the oracle instead of being shared by both.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace tmc::ref {

/// The value of an IEEE 754 binary16 word: 1 sign bit, 5 exponent bits
/// (bias 15), 10 fraction bits; exponent 0 is zero or subnormal
/// (fraction * 2^-24), exponent 31 is infinity (fraction 0) or NaN.
double binary16Value(uint16_t bits);

/// The value of a bfloat16 word: the top half of an IEEE 754 binary32, i.e.
/// 1 sign bit, 8 exponent bits (bias 127), 7 fraction bits; exponent 0 is
/// zero or subnormal (fraction * 2^-133), exponent 255 infinity or NaN.
double bfloat16Value(uint16_t bits);

/// `value` rounded to the nearest bfloat16 (8 significant bits; ties to even),
/// as a bf16 GEMM rounds its inputs (precision = bf16). Zero, infinities and
/// NaN pass through; below 2^-126 the quantum is bf16's subnormal 2^-133.
double roundToBfloat16(double value);

/// `value` rounded to the nearest IEEE 754 binary16 (11 significant bits;
/// ties to even), as q4 stores each block's scale (precision = q4). Below
/// 2^-14 the quantum stays the subnormal 2^-24; past the largest finite
/// value, 65504, a value that rounds up is infinity. Zero, infinities and
/// NaN pass through.
double roundToBinary16(double value);

} // namespace tmc::ref
