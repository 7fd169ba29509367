//===- ExecutorGen.h - The generated C++ executor ---------------*- C++ -*-===//
//
// The executor is the only model-specific C++ in an executable: the weight
// table (the manifest) and a `run` that calls the AOT kernels in plan order
// over one arena. It implements runtime/tmr_abi.h; the runtime supplies main()
// and the executor's fixed code (runtime/executor_support.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/ExecutorOptions.h"
#include "compiler/KernelPlan.h"
#include "compiler/Target.h"

#include <string>
#include <vector>

namespace tmc {

/// C++ source of the executor. Kernel i is called as
/// `tmk_<kernels[i].name()><options.variantSuffix>`.
std::string generateExecutor(const KernelPlan &plan, const ExecutorOptions &options);

/// C++ source of a multi-ISA executable's tmr_compiled_model() and
/// tmr_compiled_isa(): at the first call they pick the first variant of
/// `target` the CPU supports, or the one TMC_ISA names, once.
std::string generateDispatcher(const TargetInfo &target);

/// NAME.h of `--emit=lib`: the runtime's C API (`runtimeHeader`, tmr.h's
/// text, inlined so that one header suffices) and the model's sizes as
/// NAME_VOCAB, NAME_MAX_SEQ, ... macros (NAME upper-cased into an identifier).
std::string generateLibraryHeader(const KernelPlan &plan,
                                  const std::string &libraryName,
                                  const std::string &runtimeHeader);

} // namespace tmc
