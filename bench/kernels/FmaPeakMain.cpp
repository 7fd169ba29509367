//===- FmaPeakMain.cpp - Prints this machine's measured FMA peak ----------===//
//
// The limit bench scripts read GEMM and model rates against, measured as
// `tmc tune` measures it (compiler/tune/FmaPeak.cpp) at the moment of the
// run: a VM's clock and its neighbours move it.
//
// Usage: bench_fma_peak [--target host|x86-64-avx2|x86-64-avx512] [--threads N]...
// Prints one JSON object: {"target": ..., "gflops": {"1": ..., "2": ...}}.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target.h"
#include "compiler/tune/FmaPeak.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

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
  std::printf("%s}}\n", json.c_str());
  return 0;
}
