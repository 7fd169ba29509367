//===- ExecutorGen.h - The generated C++ executor ---------------*- C++ -*-===//
//
// The executor is the only model-specific C++ in an executable: the weight
// table (the manifest) and a `run` that calls the AOT kernels in plan order
// over one arena. It implements runtime/tmr_abi.h; the runtime supplies main().
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"
#include "compiler/Target.h"
#include "frontend/Manifest.h"
#include "frontend/ModelSpec.h"

#include <string>
#include <vector>

namespace tmc {

struct ExecutorOptions {
  std::string sourceName;   ///< the spec file, for the banner
  int defaultThreads = 0;   ///< `tmc compile --threads`; 0 lets Halide use every core
  TargetInfo target;        ///< the kernels' target: it fixes the packed weight layout
  bool trace = false;       ///< report every kernel call's output (runtime/trace.h)
  /// One variant of a multi-ISA build ("_avx2"): its kernels are
  /// tmk_<kernel><suffix> and its model tmr_compiled_model<suffix>(), which
  /// the dispatcher (generateDispatcher) calls. Empty: the executable's only
  /// executor, defining tmr_compiled_model() and tmr_compiled_isa() itself.
  std::string variantSuffix;
};

/// The fixed text every executor starts with (ExecutorPrelude.cpp).
const char *executorPrelude();

/// `text` as a C++ string literal, quotes and backslashes escaped.
std::string cxxStringLiteral(const std::string &text);

/// C++ source of the executor. Kernel i is called as
/// `tmk_<kernels[i].name()><options.variantSuffix>`.
std::string generateExecutor(const KernelPlan &plan, const ModelSpec &spec,
                             const std::vector<TensorSpec> &manifest,
                             const ExecutorOptions &options);

/// C++ source of a multi-ISA executable's tmr_compiled_model() and
/// tmr_compiled_isa(): at the first call they pick the first variant of
/// `target` the CPU supports, or the one TMC_ISA names, once.
std::string generateDispatcher(const TargetInfo &target);

/// NAME.h of `--emit=lib`: the runtime's C API (`runtimeHeader`, tmr.h's
/// text, inlined so that one header suffices) and the model's sizes as
/// NAME_VOCAB, NAME_MAX_SEQ, ... macros (NAME upper-cased into an identifier).
std::string generateLibraryHeader(const KernelPlan &plan, const ModelSpec &spec,
                                  const std::string &libraryName,
                                  const std::string &runtimeHeader,
                                  const ExecutorOptions &options);

} // namespace tmc
