//===- UnfusedAttention.h - Attention as three kernels, for comparison ----===//
//
// The unfused baseline of bench/kernels' attention rows: the causal attention
// of one layer as three Halide pipelines that materialize the [heads, T, T]
// scores, the way a framework without a fused kernel runs it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/halide/Lowering.h"

namespace tmc::bench {

/// scores(j, i, h) = scale * q(., h, i) . k(., h, j): a register-tiled GEMM
/// per head over keys transposed once per head. Arguments query, key.
halide::LoweredKernel lowerScores(int heads, int headDim, float scale, int vectorWidth);
/// probs(j, i, h) = softmax over j <= i of scores(j, i, h) (causal), zero above
/// the diagonal; row max, exp and sum vectorized over keys. Argument scores.
halide::LoweredKernel lowerCausalSoftmax(int heads, int vectorWidth);
/// out(d, h, i) = sum_j probs(j, i, h) v(d, h, j): a register-tiled GEMM per
/// head. Arguments probs, value.
halide::LoweredKernel lowerWeightedSum(int heads, int headDim, int vectorWidth);

} // namespace tmc::bench
