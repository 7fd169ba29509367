//===- FmaPeak.cpp - The machine's measured FMA throughput ----------------===//
//
// Each thread runs kChains independent accumulator chains, enough to cover
// the FMA latency times the FMA ports of any x86 core we target (4 cycles x
// 2 ports = 8 needed), with every operand in registers: no loads, so the
// loop measures the arithmetic limit and nothing else. The threads start
// together behind a barrier and the clock runs until the last one ends, so
// that the figure is what they sustain side by side (two vCPUs may share a
// physical core or a power budget; more threads than cores share the cores):
// secondsSideBySide.
//
//===----------------------------------------------------------------------===//

#include "compiler/tune/FmaPeak.h"

#include "compiler/Error.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tmc::tune {

namespace {

constexpr int kChains = 12;
constexpr long kIterations = 10000000;

#if defined(__x86_64__)
typedef float Floats16 __attribute__((vector_size(64)));
typedef float Floats8 __attribute__((vector_size(32)));

/// kChains independent chains acc = acc * a + b on vectors of `Lanes` floats
/// (GCC's vector extension; the caller's target attribute picks the ISA and
/// -ffp-contract=fast, GCC's default under gnu++, fuses each into one FMA).
template <typename Vector, int Lanes>
__attribute__((always_inline)) inline float fmaChains(long iterations, float seed) {
  Vector acc[kChains];
  for (int c = 0; c < kChains; ++c)
    acc[c] = Vector{} + (seed + static_cast<float>(c));
  const Vector a = Vector{} + 0.999999f, b = Vector{} + 1e-7f;
  for (long i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c)
      acc[c] = acc[c] * a + b;
  float total = 0;
  for (int c = 0; c < kChains; ++c)
    for (int lane = 0; lane < Lanes; ++lane)
      total += acc[c][lane];
  return total;
}

__attribute__((target("avx512f"))) float fmaLoopAvx512(long n, float seed) {
  return fmaChains<Floats16, 16>(n, seed);
}

__attribute__((target("avx2,fma"))) float fmaLoopAvx2(long n, float seed) {
  return fmaChains<Floats8, 8>(n, seed);
}
#endif

using Loop = float (*)(long, float);

/// The loop for `target` on this machine, or why there is none.
llvm::Expected<Loop> loopFor(const TargetInfo &target) {
  if (target.gpu)
    return makeError("a GPU target's limit is not measured on the host");
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (target.isa == Isa::AVX512) {
    if (__builtin_cpu_supports("avx512f"))
      return fmaLoopAvx512;
    return makeError("this CPU lacks AVX-512");
  }
  if (target.isa == Isa::AVX2) {
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      return fmaLoopAvx2;
    return makeError("this CPU lacks AVX2 and FMA");
  }
#endif
  return makeError(llvm::Twine("no FMA measurement for ") + target.isaName() +
                   " on this machine");
}

} // namespace

double secondsSideBySide(int threads, const std::function<void(int thread)> &work) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      ready.fetch_add(1);
      while (!go.load())
        std::this_thread::yield();
      work(t);
    });
  while (ready.load() < threads)
    std::this_thread::yield();
  auto start = std::chrono::steady_clock::now();
  go.store(true);
  for (std::thread &w : workers)
    w.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double linearFlops(const KernelDesc &kernel, int64_t tokens) {
  if (kernel.kind != KernelKind::linear)
    return 0;
  return 2.0 * static_cast<double>(kernel.inWidth) * static_cast<double>(kernel.width) *
         static_cast<double>(tokens);
}

double fmaPeakMs(const KernelDesc &kernel, int64_t tokens, double peakGflops) {
  return peakGflops > 0 ? linearFlops(kernel, tokens) / (peakGflops * 1e6) : 0;
}

int fmaPeakFlopsPerIteration(const TargetInfo &target) {
  return kChains * target.vectorWidth * 2;
}

llvm::Expected<double> measureFmaPeak(const TargetInfo &target, int threads) {
  llvm::Expected<Loop> loopOrError = loopFor(target);
  if (!loopOrError)
    return loopOrError.takeError();
  Loop loop = *loopOrError;
  threads = std::max(1, threads);
  // More threads than cores share them: each does its share of the work, so
  // that a run takes a few tens of milliseconds whatever --threads says.
  const long cores = std::max(1u, std::thread::hardware_concurrency());
  const long iterations =
      std::max(100000L, kIterations * std::min<long>(cores, threads) / threads);
  double best = 0;
  std::atomic<float> sink{0};
  for (int run = 0; run < 9; ++run) {
    double seconds = secondsSideBySide(threads, [&](int t) {
      sink.store(loop(iterations, static_cast<float>(t))); // keeps the result alive
    });
    double flops = static_cast<double>(fmaPeakFlopsPerIteration(target)) * iterations * threads;
    best = std::max(best, flops / seconds / 1e9);
  }
  return best;
}

} // namespace tmc::tune
