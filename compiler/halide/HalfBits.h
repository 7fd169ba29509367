//===- HalfBits.h - IEEE half precision by integer operations --*- C++ -*-===//
//
// bf16 on CUDA: the NVPTX backend of Halide 14's LLVM fails on bf16 values
// ("Copy one register into another with a different width"), so a GPU
// schedule's bf16 GEMM converts through the bits (bfloatBitsOf below).
//
// q4 weights carry f16 scales (ggml's Q4_0). Halide's Float(16) casts would
// let LLVM pick AVX512-FP16 instructions on the avx512_sapphirerapids target
// (the AVX512-BF16/VNNI variant), which Zen 4 lacks: an illegal instruction
// at run time. These conversions use only integer and f32 operations, on
// every target, and never a 16-bit value: LLVM moves one through an xmm
// register with AVX512-FP16's vmovw there.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Halide.h"

namespace tmc::halide {

/// The binary16 bits (the low 16 of a uint32) nearest `value` (f32), ties to even:
/// subnormals, overflow to infinity and NaN as IEEE 754 rounds them.
Halide::Expr halfBitsOf(Halide::Expr value);

/// The f32 value of binary16 bits `bits` (the low 16 of an unsigned integer
/// of any width): exact for every finite
/// value (subnormals too), infinities and NaN kept.
Halide::Expr floatOfHalfBits(Halide::Expr bits);

/// The bfloat16 bits (the low 16 of a uint32) nearest `value` (f32), ties to
/// even, as Halide's bf16 cast and the reference round; NaN kept.
Halide::Expr bfloatBitsOf(Halide::Expr value);

/// The f32 value of bfloat16 bits `bits` (the low 16 of an unsigned
/// integer): exact.
Halide::Expr floatOfBfloatBits(Halide::Expr bits);

} // namespace tmc::halide
