//===- InferShapes.cpp - Static widths from each op's operands -------------===//
//
// Every op states its result shape through the ShapeInference interface, so
// this pass is a single forward walk: operands are defined before their
// users, and a refined result is seen by every later op.
//
//===----------------------------------------------------------------------===//

#include "dialects/tm/Passes.h"

#include "mlir/IR/BuiltinTypes.h"

namespace tmc::tm {
#define GEN_PASS_DEF_TMINFERSHAPES
#include "dialects/tm/Passes.h.inc"
} // namespace tmc::tm

using namespace mlir;
using namespace tmc::tm;

namespace {

std::string shapeText(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + (ShapedType::isDynamic(shape[i]) ? std::string("?")
                                                                 : std::to_string(shape[i]));
  return text + "]";
}

struct InferShapesPass : tmc::tm::impl::TMInferShapesBase<InferShapesPass> {
  using tmc::tm::impl::TMInferShapesBase<InferShapesPass>::TMInferShapesBase;

  /// Refines `op`'s result; fails (with an error at the op) when a static
  /// size in the IR contradicts what the operands imply.
  LogicalResult refine(ShapeInference op) {
    Value result = op->getResult(0);
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || type.getRank() != 2)
      return op->emitOpError("result must be a [rows, width] tensor, got ") << result.getType();
    SmallVector<int64_t, 2> inferred = op.inferResultShape();
    SmallVector<int64_t, 2> refined(type.getShape());
    for (unsigned i = 0; i < 2; ++i) {
      if (ShapedType::isDynamic(inferred[i]))
        continue;
      if (!ShapedType::isDynamic(refined[i]) && refined[i] != inferred[i])
        return op->emitOpError("result is declared ")
               << result.getType() << " but its operands make it "
               << shapeText(inferred);
      refined[i] = inferred[i];
    }
    if (refined == SmallVector<int64_t, 2>(type.getShape()))
      return success();
    auto newType = RankedTensorType::get(refined, type.getElementType());
    if (explain)
      emitRemark(op->getLoc()) << originPrefix(op->getLoc()) << "inferred " << newType
                               << " (was " << type << ")";
    result.setType(newType);
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    WalkResult walk = func.walk([&](ShapeInference op) {
      return failed(refine(op)) ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    // The function now returns the refined types.
    Operation *terminator = func.getBody().back().getTerminator();
    auto type = FunctionType::get(&getContext(), func.getArgumentTypes(),
                                  terminator->getOperandTypes());
    if (type != func.getFunctionType())
      func.setType(type);
  }
};

} // namespace
