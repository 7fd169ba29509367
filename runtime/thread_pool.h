//===- thread_pool.h - The threads Halide's parallel loops run on -*- C++ -*-===//
//
// Halide's own pool puts a worker to sleep on a condition variable the moment
// it finds no job, so every parallel loop wakes it again: 20-30 us a loop on
// a 2-vCPU virtual machine (a futex wake crosses to the other vCPU), more
// than a norm, rope or small GEMM of a short prompt or a decoding step
// takes. tmc's pool (installed with halide_set_custom_do_par_for) keeps its
// workers spinning for a while after each loop, so that the next one starts
// at once, and sleeps them when nothing has come for kSpinMicroseconds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "HalideRuntime.h"

#include <cstdint>

namespace tmr {

/// The fewest values a row-wise pass hands to the pool: a call with fewer
/// (a decoding step's row, a batched step's few) runs on its caller. The
/// compiler's default schedules (defaultParallelMinRows; Schedule.cpp says
/// why 2^14) and a prompt's cache appends (executor_support.cpp) share it.
constexpr int64_t kPoolMinValues = int64_t(1) << 14;

/// Runs Halide's parallel loops on `threads` threads (the caller and
/// threads - 1 workers; 0: HL_NUM_THREADS, else every core) from now on:
/// installs tmc's pool on the first call (halide_set_custom_do_par_for), and
/// sets Halide's own count too. (thread_pool_halide.cpp)
void useThreads(int threads);

/// The pool itself (thread_pool.cpp; no Halide runtime function needed).
/// Loops use `threads` threads from now on (at least 1), workers started as
/// needed and never stopped.
void setPoolThreads(int threads);
/// The threads loops use now.
int poolThreads();
/// Halide's do_par_for: task(userContext, i, closure) for every i in
/// [min, min + size), on the pool's threads; zero, or one of the nonzero
/// results the tasks returned.
int poolParallelFor(void *userContext, halide_task_t task, int min, int size, uint8_t *closure);

} // namespace tmr
