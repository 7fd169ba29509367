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

#include <sys/mman.h>

namespace tmr {

inline constexpr size_t kMappedBytes = size_t(1) << 20;

/// AddressSanitizer's initializer: null unless its runtime is linked in.
extern "C" void __asan_init(void) __attribute__((weak));

/// Memory on a TMR_BUFFER_ALIGNMENT boundary, or null when there is none.
/// Blocks of kMappedBytes or more are mapped from the kernel and unmapped
/// when freed: glibc would otherwise raise its mmap threshold after the first
/// such free and serve the next ones from a heap that keeps their pages
/// resident, so a process that opens and closes sessions (--bench, a server)
/// would grow by an arena each time, and a fresh arena would no longer cost
/// only the pages a run writes. In a process that links AddressSanitizer
/// every block comes from operator new, so that ASan guards the large ones
/// too: decided by the process, not by how each object was compiled, since a
/// sanitizer build's instrumented runtime links with uninstrumented model
/// code and a block may be freed by the other side. Inline: the tuner's
/// measuring harness uses it without linking the runtime.
///
/// Mapped blocks ask for transparent huge pages (MADV_HUGEPAGE; Debian's
/// kernels give them only on request): the kernels stream packed weights and
/// caches of tens to hundreds of MB, and with 4 KiB pages every 64 cache
/// lines cost a TLB miss. Measured on GPT-2 small at 2 threads (Intel Xeon,
/// 2026-11-27): a decoding step 22.0 -> 16.6 ms, prefill of 128 tokens 119
/// -> 109 ms. A kernel without THP ignores the advice.
inline bool alignedBlockIsMapped(size_t bytes) {
  static const bool asan = &__asan_init != nullptr;
  return !asan && bytes >= kMappedBytes;
}

inline void *allocateAligned(size_t bytes) noexcept {
  if (alignedBlockIsMapped(bytes)) {
    static_assert(4096 % TMR_BUFFER_ALIGNMENT == 0, "pages are aligned enough");
    void *pointer =
        ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pointer == MAP_FAILED)
      return nullptr;
    ::madvise(pointer, bytes, MADV_HUGEPAGE);
    return pointer;
  }
  return ::operator new(bytes ? bytes : 1, std::align_val_t(TMR_BUFFER_ALIGNMENT), std::nothrow);
}

/// Frees what allocateAligned(bytes) returned (null is ignored).
inline void freeAligned(void *pointer, size_t bytes) noexcept {
  if (!pointer)
    return;
  if (alignedBlockIsMapped(bytes))
    ::munmap(pointer, bytes);
  else
    ::operator delete(pointer, std::align_val_t(TMR_BUFFER_ALIGNMENT));
}

template <typename T> struct AlignedAllocator {
  using value_type = T;

  AlignedAllocator() = default;
  template <typename U> AlignedAllocator(const AlignedAllocator<U> &) {}

  T *allocate(size_t count) {
    void *pointer = allocateAligned(count * sizeof(T));
    if (!pointer)
      throw std::bad_alloc();
    return static_cast<T *>(pointer);
  }
  void deallocate(T *pointer, size_t count) { freeAligned(pointer, count * sizeof(T)); }
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
