//===- Passes.h - Passes over the tm dialect --------------------*- C++ -*-===//
#pragma once

#include "dialects/tm/TMOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>

namespace tmc::tm {

#define GEN_PASS_DECL
#include "dialects/tm/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/tm/Passes.h.inc"

/// Options of the model-level optimization pipeline (the `tm-opt` stage).
struct OptimizationOptions {
  /// 0 runs no fusion, so that every model-level op becomes its own kernel.
  unsigned optLevel = 2;
  /// Remarks for every fusion made or declined (`tmc compile --explain`).
  bool explain = false;
};

/// verify -> canonicalize -> fusions -> cse: what `tmc compile` runs between
/// the `tm` and `tm-opt` stages.
void buildOptimizationPipeline(mlir::OpPassManager &pm,
                               const OptimizationOptions &options);

/// Registers the passes and the named pipeline `tm-optimize` with MLIR's
/// registry so that tmc-opt and --pass-pipeline can name them.
void registerAllPasses();

} // namespace tmc::tm
