//===- MemoryLimit.cpp - The memory system's limit for one kernel ---------===//
//
// Each thread streams its share of a read buffer (vector loads into four
// independent sums) and of a write buffer (vector stores), `passes` times
// side by side as FmaPeak.cpp runs its FMA chains (secondsSideBySide). The pass count grows until a
// run takes long enough for the clock, so that a kernel whose bytes fit in L1 and one whose bytes
// spill to DRAM are both measured at their level.
//
//===----------------------------------------------------------------------===//

#include "compiler/tune/MemoryLimit.h"

#include "compiler/Error.h"
#include "compiler/tune/FmaPeak.h"
#include "runtime/aligned.h"

#include <algorithm>
#include <atomic>
#include <new>
#include <string>
#include <vector>

namespace tmc::tune {

namespace {

/// Bytes of one weight of a linear kernel's packed form (per-channel scales
/// and q4's per-block scales counted apart).
int64_t linearWeightBytes(const KernelDesc &k) {
  const int64_t K = k.inWidth, N = k.width;
  if (k.precision == "bf16")
    return 2 * K * N;
  if (k.precision == "int8")
    return K * N + 4 * N; // a float scale per output channel
  if (k.precision == "q4")
    return (K + 31) / 32 * (16 + 2) * N; // 32 nibbles and an f16 scale per block
  return 4 * K * N;
}

#if defined(__x86_64__)
typedef float Floats16 __attribute__((vector_size(64)));
typedef float Floats8 __attribute__((vector_size(32)));

/// Sums `count` vectors at `in` into four chains (loads, nothing else to wait
/// for) and stores `outCount` vectors at `out`.
template <typename Vector>
__attribute__((always_inline)) inline float stream(const Vector *in, int64_t count, Vector *out,
                                                   int64_t outCount) {
  Vector s0{}, s1{}, s2{}, s3{};
  int64_t i = 0;
  for (; i + 4 <= count; i += 4) {
    s0 += in[i];
    s1 += in[i + 1];
    s2 += in[i + 2];
    s3 += in[i + 3];
  }
  for (; i < count; ++i)
    s0 += in[i];
  const Vector value = s0 + s1 + s2 + s3;
  for (int64_t o = 0; o < outCount; ++o)
    out[o] = value;
  return value[0];
}

__attribute__((target("avx512f"), noinline)) float streamAvx512(const void *in, int64_t inBytes,
                                                                void *out, int64_t outBytes) {
  return stream(static_cast<const Floats16 *>(in), inBytes / 64, static_cast<Floats16 *>(out),
                outBytes / 64);
}

__attribute__((target("avx2"), noinline)) float streamAvx2(const void *in, int64_t inBytes,
                                                           void *out, int64_t outBytes) {
  return stream(static_cast<const Floats8 *>(in), inBytes / 32, static_cast<Floats8 *>(out),
                outBytes / 32);
}
#endif

using Loop = float (*)(const void *, int64_t, void *, int64_t);

llvm::Expected<Loop> loopFor(const TargetInfo &target) {
  if (target.gpu)
    return makeError("a GPU target's memory limit is not measured on the host");
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (target.isa == Isa::AVX512 && __builtin_cpu_supports("avx512f"))
    return streamAvx512;
  if (target.isa == Isa::AVX2 && __builtin_cpu_supports("avx2"))
    return streamAvx2;
#endif
  return makeError(llvm::Twine("no memory measurement for ") + target.isaName() +
                   " on this machine");
}

/// `bytes` rounded up to whole cache lines, at least one.
int64_t lines(int64_t bytes) { return std::max<int64_t>(64, (bytes + 63) / 64 * 64); }

} // namespace

int64_t rowsBeforeTokens(const KernelDesc &kernel, size_t argument) {
  // With T rows of keys alone, the first window's queries saw fewer keys
  // than any later chunk's (a decoding step, one): the long-context
  // decoder's attention (window 256, chunks of 512) took 1.6x its harness
  // time in the model.
  if (kernel.kind != KernelKind::attention || !kernel.windowKeys ||
      (argument != 1 && argument != 2))
    return 0;
  return std::max<int64_t>(0, std::max(kernel.mask.window, kernel.mask.dilated) - 1);
}

KernelTraffic kernelTraffic(const KernelDesc &kernel, int64_t tokens) {
  KernelTraffic traffic;
  std::vector<BufferShape> sig = kernelSignature(kernel);
  for (size_t i = 0; i < sig.size(); ++i) {
    const BufferShape &shape = sig[i];
    if (shape.isScalar)
      continue;
    int64_t elements = 1;
    for (int64_t e : shape.extents)
      // T, and keys or sources as many as T (a window cache's earlier rows more)
      elements *= e < 0 ? tokens + rowsBeforeTokens(kernel, i) : e;
    int64_t bytes = elements * (shape.isUInt16 || shape.isBF16 ? 2 : shape.isInt8 ? 1 : 4);
    if (kernel.kind == KernelKind::linear && i == 1)
      bytes = linearWeightBytes(kernel);
    // An embedding reads the rows of its tables its tokens name, not the tables.
    if (kernel.kind == KernelKind::embed && i >= 2 && i + 1 < sig.size())
      bytes = std::min(bytes, 4 * kernel.width * tokens);
    (i + 1 == sig.size() ? traffic.writeBytes : traffic.readBytes) += bytes;
  }
  return traffic;
}

llvm::Expected<double> measureMemoryMs(const TargetInfo &target, const KernelTraffic &traffic,
                                       int threads) {
  llvm::Expected<Loop> loopOrError = loopFor(target);
  if (!loopOrError)
    return loopOrError.takeError();
  Loop loop = *loopOrError;
  threads = std::max(1, threads);
  // Each thread's share, in whole cache lines.
  const int64_t readShare = lines(traffic.readBytes / threads);
  const int64_t writeShare = lines(traffic.writeBytes / threads);
  // Allocated as the harness allocates the kernel's buffers (runtime/aligned.h:
  // huge pages for large blocks), and zeroed: their pages are present, as a
  // kernel's are after its warm-up calls.
  tmr::AlignedVector<char> in, out;
  try {
    in.resize(readShare * threads);
    out.resize(writeShare * threads);
  } catch (const std::bad_alloc &) {
    return makeError("cannot allocate " + std::to_string(readShare * threads) + " + " +
                     std::to_string(writeShare * threads) + " bytes to measure the memory limit");
  }
  std::atomic<float> sink{0};
  // Seconds of one run of `passes` passes by every thread together.
  auto timed = [&](int passes) {
    return secondsSideBySide(threads, [&](int t) {
      const char *myIn = in.data() + t * readShare;
      char *myOut = out.data() + t * writeShare;
      float total = 0;
      for (int p = 0; p < passes; ++p) {
        total += loop(myIn, readShare, myOut, writeShare);
        asm volatile("" ::: "memory"); // every pass reads and writes again
      }
      sink.store(total);
    });
  };
  // Enough passes for a run of 10 ms or more (a pass of an L1-sized kernel
  // takes microseconds, one of a table spilling to DRAM milliseconds).
  int passes = 1;
  timed(1); // warm: the caches hold what they would after the harness's warm-up calls
  while (passes < (1 << 20)) {
    double seconds = timed(passes);
    if (seconds >= 0.01)
      break;
    passes = seconds <= 0 ? passes * 16
                          : std::min(1 << 20, static_cast<int>(passes * 0.012 / seconds) + 1);
  }
  double best = 1e30;
  for (int run = 0; run < 5; ++run)
    best = std::min(best, timed(passes) / passes);
  return best * 1e3;
}

} // namespace tmc::tune
