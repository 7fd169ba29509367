//===- executor_gpu.h - What a GPU target's executor calls ------*- C++ -*-===//
//
// The weights live on the GPU from prepare() on: one persistent device copy
// of every weight a kernel reads (uploaded once; kernels never write them),
// while activations stay in host memory and each kernel call copies its
// inputs in and its output back. Kept apart from executor_support.cpp because
// these call Halide's CUDA runtime: only a GPU target's executables, whose
// Halide runtime object has it, pull this object out of libtmr_runtime.a.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/executor_support.h"

#include <initializer_list>
#include <vector>

namespace tmr::executor {

/// A View that may also have a copy on the GPU, freed with the view. A GPU
/// executor names it View (its kernels' arguments all have device copies).
struct DeviceView : View {
  using View::View;
  ~DeviceView();
  /// Marks memory the host wrote: Halide copies it to the GPU before a
  /// kernel reads it.
  halide_buffer_t *input() {
    buffer.set_host_dirty(true);
    return &buffer;
  }
};

/// After a kernel call: its output back to the host (activations live in
/// host memory between calls), every per-call device copy freed into
/// Halide's allocation cache (halide_reuse_device_allocations). Returns 0
/// or Halide's error code.
int deviceDone(std::initializer_list<DeviceView *> views);

/// What a GPU executor's prepare() returns: the packed block on the host and
/// one persistent view (host + device copy) per weight a kernel reads raw
/// and per packed weight.
struct DeviceWeights {
  Aligned<float> block;
  std::vector<DeviceView *> raw, packed;
  DeviceWeights() = default;
  DeviceWeights(const DeviceWeights &) = delete;
  DeviceWeights &operator=(const DeviceWeights &) = delete;
  ~DeviceWeights();
};

/// Copies `view` (from `new (std::nothrow)`, so possibly null) to the GPU.
/// Returns 0 or Halide's error code.
int upload(DeviceView *view);

} // namespace tmr::executor
