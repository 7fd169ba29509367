//===- AOT.h - Ahead-of-time compilation of Halide kernels ------*- C++ -*-===//
#pragma once

#include "compiler/halide/Lowering.h"
#include "compiler/Target.h"

#include "llvm/Support/Error.h"

#include <string>

namespace tmc::halide {

/// What to write for one kernel; an empty path skips that output.
struct KernelOutputs {
  std::string object;   ///< .o, compiled without the Halide runtime
  std::string stmt;     ///< Halide's lowered statement
  std::string assembly; ///< target assembly
  std::string *deviceCode = nullptr; ///< GPU targets: receives the kernel's PTX
  /// A kernel cache directory (ObjectCache.h) for a lone object; empty: none.
  std::string cacheDir;
  /// Set to whether the object came from that cache.
  bool *cacheHit = nullptr;
  /// Set to the object's key in that cache (empty where it is not cached).
  std::string *objectKey = nullptr;
};

/// AOT-compiles `kernel` as the C function `functionName`. Halide's errors
/// (Halide reports them as exceptions) come back as the error.
llvm::Error compileKernel(const LoweredKernel &kernel, const std::string &functionName,
                          const TargetInfo &target, const KernelOutputs &outputs);

/// A failed write of Halide's (a file-size limit, a full disk) ends the
/// process with exit status 1 after writing its one-line reason, by default
/// as tmc's error on stderr. With `fd` >= 0 the reason goes to `fd` alone,
/// without the prefix: a compile job's child, whose parent reports it.
void reportWriteFailuresTo(int fd);

/// The Halide runtime (thread pool, allocator, error handling) compiled once
/// for all kernels of an executable.
llvm::Error compileRuntime(const TargetInfo &target, const std::string &objectPath,
                           const std::string &cacheDir = {}, bool *cacheHit = nullptr);

/// The `halide` stage text of one kernel: its Funcs' definitions and the
/// schedule it was compiled with.
std::string describeKernel(const std::string &name, const LoweredKernel &kernel,
                           const Schedule &schedule);

} // namespace tmc::halide
