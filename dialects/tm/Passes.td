//===- Passes.td - Passes over the tm dialect -------------*- tablegen -*-===//

#ifndef TM_PASSES_TD
#define TM_PASSES_TD

include "mlir/Pass/PassBase.td"

def TMInferShapes : Pass<"tm-infer-shapes", "::mlir::func::FuncOp"> {
  let summary = "Refine result shapes the IR leaves dynamic from each op's operands";
  let description = [{
    Walks the function in order and asks each op implementing the
    ShapeInference interface for its result shape; a dimension the IR gives
    as `?` but the operands fix (a weight's width, a head count) becomes
    static, and the function's result types follow. Hand-written or edited IR
    (`tmc compile x.mlir`) may leave widths open; kernels need them known. A
    static size that contradicts the operands is an error at the op's spec
    location.

    ```mlir
    %y = tm.linear %x, %w : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x?xf32>
    // becomes
    %y = tm.linear %x, %w : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    ```
  }];
  let dependentDialects = ["::tmc::tm::TMDialect"];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for every result type refined">
  ];
}

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

def TMFuseLinearResidual : Pass<"tm-fuse-linear-residual", "::mlir::func::FuncOp"> {
  let summary = "Fold a residual tm.add into the tm.linear that feeds it";
  let description = [{
    `x + linear(h)` becomes `linear(h) residual x` when the linear's result
    has no other user: the GEMM adds the residual while storing its output
    tile, saving a pass over the residual stream per sublayer. Runs after
    `tm-fuse-residual-norm`, which takes the adds a norm reads alone.

    ```mlir
    %y = tm.linear %h, %w {activation = "none"} : (tensor<?x128xf32>, tensor<64x128xf32>) -> tensor<?x64xf32>
    %s = tm.add %x, %y : tensor<?x64xf32>
    // becomes
    %s = tm.linear %h, %w residual %x {activation = "none"}
        : (tensor<?x128xf32>, tensor<64x128xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let dependentDialects = ["::tmc::tm::TMDialect"];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for every fusion made, and for every one declined, with its reason">
  ];
}

def TMFuseProjections : Pass<"tm-fuse-projections", "::mlir::func::FuncOp"> {
  let summary = "Fuse the linear layers that read one input into one GEMM (q/k/v, gate/up)";
  let description = [{
    An attention projects the same normalized input three times (q, k and
    v; with GQA k and v are narrower), a gated FFN twice (gate and up), and
    an encoder-decoder's cross-attention projects the encoder's output into
    every decoder layer's k and v. Each of those is a GEMM over the same
    rows: one GEMM over the stacked weights reads the input once, launches
    once and splits its wider N more evenly across threads. The weights
    are stacked at load time (`tm.concat`); `tm.split` hands each consumer
    its columns of the wide result in place. Linears fuse when they read
    the same value and agree on their epilogue (activation, bias) and
    precision (a bf16, int8 or q4 GEMM never takes an f32 linear's
    weights; int8 and q4 linears stack exactly, their scales being per
    output channel (per block of 32 along K for q4) and per token row); one
    with a residual, or whose result the function returns, stays alone.
    Runs after the epilogue fusions, so what a linear ends in is settled.

    ```mlir
    %q = tm.linear %x, %wq, %bq {activation = "none"} : (tensor<?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    %k = tm.linear %x, %wk, %bk {activation = "none"} : (tensor<?x64xf32>, tensor<16x64xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    // becomes
    %w = tm.concat %wq, %wk : (tensor<64x64xf32>, tensor<16x64xf32>) -> tensor<80x64xf32>
    %b = tm.concat %bq, %bk : (tensor<64xf32>, tensor<16xf32>) -> tensor<80xf32>
    %qk = tm.linear %x, %w, %b {activation = "none"} : (tensor<?x64xf32>, tensor<80x64xf32>, tensor<80xf32>) -> tensor<?x80xf32>
    %q, %k = tm.split %qk : tensor<?x80xf32> -> tensor<?x64xf32>, tensor<?x16xf32>
    ```
  }];
  let dependentDialects = ["::tmc::tm::TMDialect"];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark for every fusion made, and for every one declined, with its reason">
  ];
}

#endif // TM_PASSES_TD
