//===- FmaPeak.h - The machine's measured FMA throughput --------*- C++ -*-===//
//
// The GEMM limit `tmc tune` reports its kernels against: what this machine's
// cores sustain in vector fused multiply-adds at the tuning thread count,
// measured in the tuning run itself (a VM's clock, its neighbours and the
// CPU model all move it; a number from a data sheet would not).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"
#include "compiler/Target.h"

#include "llvm/Support/Error.h"

#include <functional>

namespace tmc::tune {

/// Seconds from the moment `threads` threads, started and waiting behind a
/// barrier, are released to run `work(thread)` until the last one ends: what
/// they do together, however the cores were shared out among them (two vCPUs
/// may share a physical core or a power budget). The memory limit's
/// measurement (MemoryLimit.cpp) runs its threads the same way.
double secondsSideBySide(int threads, const std::function<void(int thread)> &work);

/// The FLOPs of one call of a linear kernel at `tokens` rows (2 T K N); 0
/// for other kernels, whose limit is their memory traffic (MemoryLimit.h).
double linearFlops(const KernelDesc &kernel, int64_t tokens);

/// Milliseconds the FMA peak (`peakGflops`) allows one call of `kernel` at
/// `tokens` rows: its ceiling in the report's roofline; 0 when the kernel
/// is not a GEMM or no peak was measured.
double fmaPeakMs(const KernelDesc &kernel, int64_t tokens, double peakGflops);

/// Single-precision FLOPs one loop iteration of the measurement performs per
/// thread: independent FMA chains x lanes x 2 (a multiply and an add).
int fmaPeakFlopsPerIteration(const TargetInfo &target);

/// GFLOP/s of `threads` threads running independent FMA chains on `target`'s
/// vectors at once, best of a few runs. An error says why when this machine
/// cannot run the target's vector instructions (another ISA, a GPU target).
llvm::Expected<double> measureFmaPeak(const TargetInfo &target, int threads);

} // namespace tmc::tune
