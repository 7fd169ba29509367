//===- StandInKernel.cpp - A kernel for the measuring harness's own test --===//
//
// What the harness (compiler/tune/MeasureHarness.cpp) links at tune time is a
// Halide kernel; this plain C++ one has the same interface, so the build can
// link and run the harness without tmc: y[t][n] = sum_k x[t][k] * w[n][k],
// the weight first packed (here: copied) into a [2][8][2] panel buffer.
//
//===----------------------------------------------------------------------===//

#include "HalideRuntime.h"

#include <cstdint>
#include <cstring>

namespace {

constexpr int32_t K = 8, N = 4;

float *floats(halide_buffer_t *buffer) { return reinterpret_cast<float *>(buffer->host); }

int32_t elements(const halide_buffer_t *buffer) {
  int32_t count = 1;
  for (int d = 0; d < buffer->dimensions; ++d)
    count *= buffer->dim[d].extent;
  return count;
}

int multiply(halide_buffer_t *x, halide_buffer_t *packed, int32_t T, halide_buffer_t *y) {
  if (x->dim[0].extent != K || x->dim[1].extent != T || elements(packed) != K * N ||
      y->dim[0].extent != N || y->dim[1].extent != T)
    return -1;
  for (int32_t t = 0; t < T; ++t)
    for (int32_t n = 0; n < N; ++n) {
      float sum = 0;
      for (int32_t k = 0; k < K; ++k)
        sum += floats(x)[t * K + k] * floats(packed)[n * K + k];
      floats(y)[t * N + n] = sum;
    }
  return 0;
}

} // namespace

extern "C" int tmk_cand_pack(halide_buffer_t *weight, halide_buffer_t *packed) {
  if (elements(weight) != K * N || elements(packed) != K * N)
    return -1;
  std::memcpy(floats(packed), floats(weight), sizeof(float) * K * N);
  return 0;
}

extern "C" int tmk_cand(halide_buffer_t *x, halide_buffer_t *packed, int32_t length,
                        halide_buffer_t *y) {
  return multiply(x, packed, length, y);
}

extern "C" int tmk_cand_decode(halide_buffer_t *x, halide_buffer_t *packed, int32_t length,
                               halide_buffer_t *y) {
  return length == 1 ? multiply(x, packed, length, y) : -1;
}

// The Halide runtime functions the harness calls to run parallel loops on
// tmc's pool (runtime/thread_pool_halide.cpp): a tuned kernel's runtime
// object has them. The stand-in kernel runs no parallel loop.
extern "C" halide_do_par_for_t halide_set_custom_do_par_for(halide_do_par_for_t) { return nullptr; }
extern "C" int halide_set_num_threads(int threads) { return threads; }
