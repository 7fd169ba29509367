//===- thread_pool_halide.cpp - Halide's parallel loops on tmc's pool -----===//
//
// Apart from thread_pool.cpp so that the pool links (and is tested) without
// the Halide runtime, whose functions come from a model's kernels.
//
//===----------------------------------------------------------------------===//

#include "runtime/thread_pool.h"

#include "HalideRuntime.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace tmr {

namespace {

/// Halide's own default: HL_NUM_THREADS, else the cores.
int defaultThreads() {
  if (const char *text = std::getenv("HL_NUM_THREADS"))
    if (int n = std::atoi(text); n > 0)
      return n;
  return std::max(1u, std::thread::hardware_concurrency());
}

} // namespace

void useThreads(int threads) {
  static std::once_flag installed;
  std::call_once(installed, [] { halide_set_custom_do_par_for(poolParallelFor); });
  const int n = threads > 0 ? threads : defaultThreads();
  halide_set_num_threads(n);
  setPoolThreads(n);
}

} // namespace tmr
