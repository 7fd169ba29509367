//===- Passes.td - Passes over the tm dialect -------------*- tablegen -*-===//

#ifndef TM_PASSES_TD
#define TM_PASSES_TD

include "mlir/Pass/PassBase.td"

def TMFuseEmbeddingPositions : Pass<"tm-fuse-embedding-positions", "::mlir::func::FuncOp"> {
  let summary = "Fold tm.add_positions into the tm.embed that feeds it";
  let description = [{
    The embedding kernel then writes `table[token] * scale + position` in one
    pass over the output instead of two.
  }];
  let dependentDialects = ["::tmc::tm::TMDialect"];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for every fusion made, and for every one declined, with its reason">
  ];
}

def TMFuseLinearActivation : Pass<"tm-fuse-linear-activation", "::mlir::func::FuncOp"> {
  let summary = "Fold an elementwise activation into the tm.linear that feeds it";
  let description = [{
    The activation becomes the epilogue of the matrix multiply, applied while
    the accumulators are still in registers.
  }];
  let dependentDialects = ["::tmc::tm::TMDialect"];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for every fusion made, and for every one declined, with its reason">
  ];
}

def TMFuseResidualNorm : Pass<"tm-fuse-residual-norm", "::mlir::func::FuncOp"> {
  let summary = "Fuse a residual tm.add with the tm.norm that reads it";
  let description = [{
    Forms tm.add_norm when the sum has no other user, so the residual
    stream is read once per layer norm instead of written and read back.
  }];
  let dependentDialects = ["::tmc::tm::TMDialect"];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for every fusion made, and for every one declined, with its reason">
  ];
}

#endif // TM_PASSES_TD
