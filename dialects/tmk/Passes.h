//===- Passes.h - From tm to the kernel plan --------------------*- C++ -*-===//
#pragma once

#include "dialects/tmk/TMKOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace tmc::tmk {

#define GEN_PASS_DECL
#include "dialects/tmk/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/tmk/Passes.h.inc"

/// tm-lower-to-kernels -> tmk-tied-table-precision -> tmk-fuse-rope-epilogue
/// (not at optLevel 0: no fusion) -> tmk-dedup -> tmk-decode-variants ->
/// tmk-window-caches -> tmk-plan-buffers: what `tmc compile` runs between
/// the `tm-opt` and `kernels` stages. `explain` turns on every pass's remarks.
void buildKernelPipeline(mlir::OpPassManager &pm, bool explain = false, unsigned optLevel = 2);

/// Checks the caches that tmk-window-caches bounded (`keep`), as a module
/// read back from text may have them: only attention whose window sees at
/// most `keep` earlier positions reads each, with `window_keys`, its
/// function runs exactly in chunks, and it holds keep + the module's
/// tmk.run_chunk rows. Emits the error at the op.
mlir::LogicalResult verifyWindowCaches(mlir::ModuleOp module);

/// Registers the passes and the named pipeline `tmk-plan` with MLIR's
/// registry so that tmc-opt and --pass-pipeline can name them.
void registerAllPasses();

} // namespace tmc::tmk
