//===- aligned.h - Memory aligned for the kernels' vector loads -*- C++ -*-===//
//
// Halide's generated code may use aligned vector loads and stores on the
// buffers it is given (dense loops whose index is a multiple of the vector
// width), so every buffer the runtime hands a kernel starts on a
// TMR_BUFFER_ALIGNMENT boundary (tmr_abi.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/tmr_abi.h"

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace tmr {

template <typename T> struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <typename U> AlignedAllocator(const AlignedAllocator<U> &) {}
  T *allocate(size_t count) {
    return static_cast<T *>(
        ::operator new(count * sizeof(T), std::align_val_t(TMR_BUFFER_ALIGNMENT)));
  }
  void deallocate(T *pointer, size_t) {
    ::operator delete(pointer, std::align_val_t(TMR_BUFFER_ALIGNMENT));
  }
  template <typename U> bool operator==(const AlignedAllocator<U> &) const { return true; }
};

template <typename T> using AlignedVector = std::vector<T, AlignedAllocator<T>>;

/// A fixed-size aligned array whose elements are not initialized: a large one
/// costs no memory until its pages are written.
template <typename T> class AlignedArray {
public:
  explicit AlignedArray(size_t count)
      : data_(count ? AlignedAllocator<T>().allocate(count) : nullptr), count_(count) {}
  ~AlignedArray() {
    if (data_)
      AlignedAllocator<T>().deallocate(data_, count_);
  }
  AlignedArray(const AlignedArray &) = delete;
  AlignedArray &operator=(const AlignedArray &) = delete;
  T *data() const { return data_; }
  size_t size() const { return count_; }

private:
  T *data_;
  size_t count_;
};

inline bool isAligned(const void *pointer) {
  return reinterpret_cast<uintptr_t>(pointer) % TMR_BUFFER_ALIGNMENT == 0;
}

} // namespace tmr
