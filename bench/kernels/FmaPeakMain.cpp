//===- FmaPeakMain.cpp - Prints this machine's measured FMA peak ----------===//
//
// The limit bench scripts read GEMM and model rates against, measured as
// `tmc tune` measures it (compiler/tune/FmaPeak.cpp) at the moment of the
// run: a VM's clock and its neighbours move it.
//
// Usage: bench_fma_peak [--target host|x86-64-avx2|x86-64-avx512] [--threads N]...
// Prints one JSON object: {"target": ..., "gflops": {"1": ..., "2": ...},
// "core_round_trip_ns": ...}: the last is a cache line's round trip between
// the first two CPUs this process may use (null with one), which tells where
// a VM's two vCPUs sit at the moment: ~70 ns two threads of one core (the
// 2-thread peak is then the 1-thread one), ~190 ns one CCD, ~440 ns two
// CCDs (AMD EPYC Zen 5, 2026-11-30). Each moved models' 2-thread times.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target.h"
#include "compiler/tune/FmaPeak.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

namespace {

/// Best effort: an unpinned thread measures whatever CPUs it lands on.
void pinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

/// Nanoseconds of a cache line's round trip between the first two CPUs of
/// this process's affinity mask (a flag written by one, answered by the
/// other), best of 3 runs of 20000; nullopt with fewer than two CPUs.
std::optional<double> coreRoundTripNs() {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    return std::nullopt;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
    if (CPU_ISSET(c, &allowed))
      cpus.push_back(c);
  if (cpus.size() < 2)
    return std::nullopt;
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    constexpr int kTrips = 20000;
    alignas(64) std::atomic<int> flag{0};
    std::thread answerer([&] {
      pinTo(cpus[1]);
      for (int i = 0; i < kTrips; ++i) {
        while (flag.load(std::memory_order_acquire) != 2 * i + 1) {
        }
        flag.store(2 * i + 2, std::memory_order_release);
      }
    });
    pinTo(cpus[0]);
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kTrips; ++i) {
      flag.store(2 * i + 1, std::memory_order_release);
      while (flag.load(std::memory_order_acquire) != 2 * i + 2) {
      }
    }
    double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
        kTrips;
    answerer.join();
    best = round == 0 ? ns : std::min(best, ns);
  }
  // Back to every allowed CPU for whatever runs next.
  pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
  return best;
}

} // namespace

int main(int argc, char **argv) {
  std::string targetName = "host";
  std::vector<int> threads;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--target" && i + 1 < argc) {
      targetName = argv[++i];
    } else if (flag == "--threads" && i + 1 < argc) {
      int n = std::atoi(argv[++i]);
      if (n < 1 || n > 1024) {
        std::fprintf(stderr, "bench_fma_peak: --threads takes 1 to 1024, not '%s'\n", argv[i]);
        return 2;
      }
      threads.push_back(n);
    } else {
      std::fprintf(stderr, "usage: bench_fma_peak [--target TARGET] [--threads N]...\n");
      return 2;
    }
  }
  if (threads.empty())
    threads = {1, 2};
  llvm::Expected<tmc::TargetInfo> target = tmc::resolveTarget(targetName);
  if (!target) {
    std::fprintf(stderr, "bench_fma_peak: %s\n", llvm::toString(target.takeError()).c_str());
    return 2;
  }
  target = tmc::runnableVariant(*target);
  std::string json = "{\"target\": \"" + target->name + "\", \"gflops\": {";
  for (size_t i = 0; i < threads.size(); ++i) {
    llvm::Expected<double> peak = tmc::tune::measureFmaPeak(*target, threads[i]);
    if (!peak) {
      std::fprintf(stderr, "bench_fma_peak: %s\n", llvm::toString(peak.takeError()).c_str());
      return 1;
    }
    char entry[64];
    std::snprintf(entry, sizeof entry, "%s\"%d\": %.1f", i ? ", " : "", threads[i], *peak);
    json += entry;
  }
  std::optional<double> roundTrip = coreRoundTripNs();
  std::string trip = roundTrip ? std::to_string(std::lround(*roundTrip)) : "null";
  std::printf("%s}, \"core_round_trip_ns\": %s}\n", json.c_str(), trip.c_str());
  return 0;
}
