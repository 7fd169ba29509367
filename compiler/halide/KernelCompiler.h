//===- KernelCompiler.h - Kernel plan to objects ----------------*- C++ -*-===//
//
// The boundary between the MLIR side of the compiler and Halide: takes the
// plan, lowers every kernel with its schedule and AOT-compiles it. Callers see
// no Halide types.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"
#include "compiler/Target.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tmc {

struct KernelBuildRequest {
  std::string workDir;      ///< where objects go
  bool compileObjects = true;
  bool wantStmt = false;    ///< collect Halide's lowered statements
  bool wantAssembly = false;
  bool wantDevice = false;  ///< collect each kernel's device code (GPU targets)
  std::string kernelCache;  ///< --kernel-cache: objects reused by content (ObjectCache.h)
  int jobs = 0;             ///< objects compiled at once (0: one per CPU this process may use)
};

struct KernelBuildResult {
  std::string halideText;   ///< the `halide` stage: algorithm + schedule per kernel
  std::string stmtText;     ///< the `stmt` stage (if asked)
  std::string assemblyText; ///< the `asm` stage (if asked)
  /// The `device` stage (if asked): (kernel function, PTX) for every kernel
  /// with GPU code; host-only kernels (weight packing) have none.
  std::vector<std::pair<std::string, std::string>> deviceCode;
  std::vector<std::string> objects; ///< kernel objects, then the Halide runtime object
  int cachedObjects = 0;            ///< of `objects`, copied from the kernel cache
  int compiledObjects = 0;          ///< of `objects`, written by Halide
  /// Of the cached objects, those found by their job's key (ObjectCache.h,
  /// jobKey), without lowering their kernels.
  int unloweredObjects = 0;
};

/// The CPUs this process may run on (its affinity mask): the default of
/// --jobs.
int availableCpus();

/// Lowers every kernel of `plan` under the schedule the plan carries for it
/// and compiles it for `target` (each concrete target of a multi-ISA one),
/// each object in a process of its own, `request.jobs` at once.
llvm::Expected<KernelBuildResult> buildKernels(const KernelPlan &plan, const TargetInfo &target,
                                               const KernelBuildRequest &request);

} // namespace tmc
