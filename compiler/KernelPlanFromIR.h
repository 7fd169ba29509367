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
/// name its index, and the shape its op must have. Fails (with an MLIR
/// diagnostic) on an op it cannot map. With `explain`, every op also gets a
/// remark naming the kernel it runs as.
mlir::FailureOr<KernelPlan> formKernels(mlir::ModuleOp module,
                                        const std::vector<TensorSpec> &manifest,
                                        bool explain = false);

/// Checks every tm.weight and tmk.weight of `module` against `manifest`, as
/// formKernels does: a name in it, and its shape. A module read from a .mlir
/// file is checked as soon as it is loaded, so an edit that disagrees with
/// the spec fails at every stage, at the weight's spec line.
mlir::LogicalResult verifyWeights(mlir::ModuleOp module,
                                  const std::vector<TensorSpec> &manifest);

/// Checks that every cache op of `module` holds `maxSeq` rows, the spec's
/// max_seq: the executable appends up to max_seq rows to each cache, so a
/// smaller capacity, edited in, would write past it.
mlir::LogicalResult verifyCacheCapacities(mlir::ModuleOp module, int64_t maxSeq);

} // namespace tmc
