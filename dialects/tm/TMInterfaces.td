//===- TMInterfaces.td - Interfaces of the tm dialect -----*- tablegen -*-===//
//
// Shape inference is an op interface (as in MLIR's Toy tutorial) so that the
// inference pass knows nothing about individual ops: each op states how its
// result's [rows, width] follows from its operands and attributes.
//
//===----------------------------------------------------------------------===//
#ifndef TM_INTERFACES_TD
#define TM_INTERFACES_TD

include "mlir/IR/OpBase.td"

def TM_ShapeInferenceOpInterface : OpInterface<"ShapeInference"> {
  let cppNamespace = "::tmc::tm";
  let description = [{
    An op whose single result is a [rows, width] tensor determined by its
    operands. `tm-infer-shapes` walks a function in order and refines every
    result dimension the IR leaves dynamic (`?`) but the operands fix; the
    sequence length stays dynamic because it is only known at run time.
  }];
  let methods = [
    InterfaceMethod<[{
        The result's shape implied by the operand types and attributes; a
        dimension they leave open is `ShapedType::kDynamic`.
      }],
      "::llvm::SmallVector<int64_t, 2>", "inferResultShape">
  ];
}

#endif // TM_INTERFACES_TD
