//===- MLIRGen.h - ModelSpec to the tm dialect ------------------*- C++ -*-===//
#pragma once

#include "frontend/ModelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
}
namespace mlir {
class MLIRContext;
}

namespace tmc {

/// The module attribute naming the spec file a module was built from, so that
/// `tmc compile model.mlir` can resume the pipeline from saved or edited IR.
inline constexpr const char *kSpecAttrName = "tm.spec";

/// Builds `func.func @forward(%tokens: tensor<?xi32>) -> tensor<?xWxf32>` of tm
/// ops for `spec`. Every op carries a NameLoc with its weight prefix (e.g.
/// "encoder.layers.0.self_attn") around the FileLineColLoc of the spec key it
/// came from. Features the code generator cannot handle yet are reported as
/// errors at their spec location through the context's diagnostic engine, and
/// the result is then null. The module's `tm.spec` attribute holds the spec's
/// path as the source manager names it.
mlir::OwningOpRef<mlir::ModuleOp> buildModule(mlir::MLIRContext &context,
                                              const llvm::SourceMgr &sourceMgr,
                                              const ModelSpec &spec);

} // namespace tmc
