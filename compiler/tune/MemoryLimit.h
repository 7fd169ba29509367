//===- MemoryLimit.h - The memory system's limit for one kernel -*- C++ -*-===//
//
// The second ceiling of the report's roofline, beside the FMA peak
// (FmaPeak.h): a kernel cannot run faster than the machine reads what it
// must read and writes what it must write. How fast that is depends on where
// those bytes live (a 40 MB vocabulary head sits in a large L3, a 160 KB
// layer in L2), so it is measured per kernel, with buffers of the kernel's
// own sizes, read and written the way the measuring harness calls the
// kernel: over and over, at the tuning thread count.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"
#include "compiler/Target.h"

#include "llvm/Support/Error.h"

#include <cstdint>

namespace tmc::tune {

/// The bytes one call of a kernel must move at least: every input read once
/// (a linear kernel's weight in its precision's packed form, scales
/// included; an embedding's T rows of its table), its output written once.
struct KernelTraffic {
  int64_t readBytes = 0, writeBytes = 0;
  int64_t total() const { return readBytes + writeBytes; }
};

KernelTraffic kernelTraffic(const KernelDesc &kernel, int64_t tokens);

/// Rows before the T tokens' own that argument `argument` of `kernel` holds
/// in its extent of T, in the measuring harness and in kernelTraffic: a
/// window-cache attention's keys and values (arguments 1 and 2) hold its
/// window less one earlier rows (tmk-window-caches' keep), as a chunk after
/// the first and a decoding step read them; 0 elsewhere.
int64_t rowsBeforeTokens(const KernelDesc &kernel, size_t argument);

/// Milliseconds `threads` threads take, side by side, to read `readBytes`
/// from one buffer and write `writeBytes` to another (each thread its share,
/// with vector loads and stores), the best of several timed runs of repeated
/// passes: the memory system's limit for a kernel moving that traffic per
/// call. An error says why this machine cannot measure it.
llvm::Expected<double> measureMemoryMs(const TargetInfo &target, const KernelTraffic &traffic,
                                       int threads);

} // namespace tmc::tune
