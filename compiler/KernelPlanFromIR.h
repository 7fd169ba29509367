//===- KernelPlanFromIR.h - The kernel plan, read from the tmk module -*- C++ -*-===//
//
// The one place where the kernel-level IR becomes the plain-data KernelPlan:
// the tmk passes have formed, shared and placed the kernels; formKernels
// reads their result.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace tmc {

/// Reads the plan from a module the kernel pipeline (tmk::buildKernelPipeline)
/// has run on: @encode (if any), then @forward. `manifest` gives each weight
/// name its index. Fails (with an MLIR diagnostic) on an op it cannot map.
/// With `explain`, every op also gets a remark naming the kernel it runs as.
mlir::FailureOr<KernelPlan> formKernels(mlir::ModuleOp module,
                                        const std::vector<std::string> &manifest,
                                        bool explain = false);

} // namespace tmc
