//===- TMKDialect.td - The tmk (kernel-level) dialect -----*- tablegen -*-===//
//
// `tmk` is the kernel level below `tm`: every op either defines a kernel
// (one schedulable Halide pipeline: a kind and its static attributes) or
// calls one, binding each argument to where it lives at run time (a run
// input, a weight, the activation arena, a cache, the output).
//
//===----------------------------------------------------------------------===//
#ifndef TMK_DIALECT_TD
#define TMK_DIALECT_TD

include "mlir/IR/OpBase.td"

def TMK_Dialect : Dialect {
  let name = "tmk";
  let cppNamespace = "::tmc::tmk";
  let summary = "Kernel-level operations of the tmc compiler";
  let description = [{
    `tm-lower-to-kernels` turns every fused `tm` op into a `tmk.call` of a
    `tmk.kernel`; `tmk-dedup` merges identical kernels (the layers of a stack
    share one set), `tmk-decode-variants` marks the kernels a decoding step
    runs with one query row, and `tmk-plan-buffers` gives every intermediate
    value an arena offset from its live range. compiler/KernelPlan.cpp reads
    the result into the plan that Halide lowering and the executor use.
  }];
  let dependentDialects = ["::tmc::tm::TMDialect", "::mlir::func::FuncDialect"];
}

class TMK_Op<string mnemonic, list<Trait> traits = []>
    : Op<TMK_Dialect, mnemonic, traits>;

#endif // TMK_DIALECT_TD
