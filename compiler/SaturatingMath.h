//===- SaturatingMath.h - Sizes that cannot overflow ------------*- C++ -*-===//
//
// Sizes computed from a spec (a 4096-layer stack, a 2^40-row table) can pass
// int64_t: every such product and sum saturates at INT64_MAX instead, which
// any limit check then refuses (memory estimates, buffer limits, the weights
// init-weights would write).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace tmc {

inline int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<int64_t>::max() : sum;
}

inline int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<int64_t>::max() : product;
}

/// The number of elements of a tensor of `shape` (1 for a scalar).
inline int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t extent : shape)
    count = saturatingMul(count, extent);
  return count;
}

} // namespace tmc
