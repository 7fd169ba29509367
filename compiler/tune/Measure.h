//===- Measure.h - Timing one kernel schedule in its own process -*- C++ -*-===//
//
// A candidate schedule is compiled (Halide AOT, in a forked child) and linked
// with the measuring harness (MeasureHarness.cpp, compiled with a small header
// generated for the kernel) into an executable of its own, which runs the
// kernel on seeded random inputs of the real shapes: warm-up, repeats until a
// minimum time; the 10th percentile (the score), median and spread; then the same at T = 1. Its
// outputs are compared with the default schedule's (saved by the first
// measurement). Both processes run under a timeout and are killed past it, so
// a candidate that crashes, hangs or miscompiles costs one trial, not the
// tuner.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <string>

namespace tmc::tune {

/// Set (by a signal handler) to stop: running children are killed.
void requestStop();
bool stopRequested();

struct Measurement {
  bool ok = false;
  std::string error;       ///< why not ok: compile error, crash, timeout, wrong output
  double scoreMs = 0;      ///< what candidates are compared by: the 10th percentile of the
                           ///< repeats (robust to other processes taking the cores)
  double medianMs = 0, minMs = 0;
  double noise = 0;        ///< (p90 - p10) / median of the repeats
  double maxError = 0;     ///< vs the reference output, relative to its largest magnitude
  double decodeMs = 0;     ///< 10th percentile at T = 1 (one decoding step's call)
  double compileSeconds = 0, runSeconds = 0;
};

/// Measures schedules of one kernel. The first measurement (`reference`)
/// writes the outputs the others are checked against.
class KernelBench {
public:
  /// `dir` must exist; `runtimeObject` is the Halide runtime for `target`.
  KernelBench(const KernelDesc &kernel, const TargetInfo &target, std::string dir,
              std::string runtimeObject, int threads, int tokens);

  /// Writes the harness's header for the kernel (harnessSource) into `dir`.
  /// measure() compiles the harness with it.
  llvm::Error prepare();

  /// Compiles and times `schedule`. `reference`: save its outputs as the
  /// reference; otherwise check against them (tolerance 1e-4 relative).
  /// `keepAs`: keep the candidate's executable there (for `rerun`).
  Measurement measure(const Schedule &schedule, bool reference, double timeoutSeconds,
                      const std::string &keepAs = "");

  /// Runs a kept executable again (checked against the reference).
  Measurement rerun(const std::string &executable, double timeoutSeconds);

  /// tune_kernel.h, what the harness needs of the kernel: the candidate's
  /// declarations, its arguments' shapes and the call (for tests and debugging).
  std::string harnessSource() const;

  /// Candidates' objects are kept in and reused from this kernel cache
  /// (halide/ObjectCache.h; empty: none): `--resume` and the defaults
  /// measured by every run compile what an earlier run did.
  void setKernelCache(std::string directory) { kernelCache = std::move(directory); }

  /// Whether the executor runs a variant kernel of its own at T = 1
  /// (decodeKernelSuffix): the harness then times and checks that one there.
  bool hasDecodeKernel() const;

private:
  Measurement run(const std::string &executable, bool reference, double timeoutSeconds);

  KernelDesc kernel;
  TargetInfo target;
  std::string dir, runtimeObject, kernelCache;
  int threads, tokens;
  int serial = 0;
};

/// Runs `fn` in a forked child (its own process group), killed past
/// `timeout` seconds or on a stop request. Fails with the message of the
/// error `fn` returned (passed on through `errorFile`), or how the child
/// ended.
llvm::Error runInChild(const std::function<llvm::Error()> &fn, double timeout,
                       const std::string &errorFile);

/// Compiles the Halide runtime for `target` into `path` (in a child process).
llvm::Error compileRuntimeObject(const TargetInfo &target, const std::string &path,
                                 const std::string &kernelCache = {});

} // namespace tmc::tune
