//===- TMAttrs.cpp - Attributes of the tm dialect -------------------------===//

#include "dialects/tm/TMAttrs.h"
#include "dialects/tm/TMDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tmc::tm;

#define GET_ATTRDEF_CLASSES
#include "dialects/tm/TMAttrs.cpp.inc"

LogicalResult MaskAttr::verify(function_ref<InFlightDiagnostic()> emitError, bool causal,
                               bool padding, bool decoder, int64_t window, int64_t dilated,
                               int64_t dilation, ArrayRef<int64_t> globals,
                               int64_t randomPerRow, uint64_t randomSeed, int64_t maxSeq) {
  if (window < 0 || dilated < 0 || randomPerRow < 0)
    return emitError() << "mask window, dilated window and random_per_row must be >= 0";
  if (dilation < 1)
    return emitError() << "mask dilation must be >= 1, found " << dilation;
  if ((randomPerRow > 0 || !globals.empty()) && maxSeq <= 0)
    return emitError() << "a random or global mask needs max_seq > 0";
  for (int64_t token : globals)
    if (token < 0 || (maxSeq > 0 && token >= maxSeq))
      return emitError() << "global token " << token << " is outside [0, " << maxSeq << ")";
  return success();
}

void TMDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/tm/TMAttrs.cpp.inc"
      >();
}
