//===- TMAttrs.cpp - Attributes of the tm dialect -------------------------===//

#include "dialects/tm/TMAttrs.h"
#include "dialects/tm/TMDialect.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace tmc::tm;

#define GET_ATTRDEF_CLASSES
#include "dialects/tm/TMAttrs.cpp.inc"

LogicalResult tmc::tm::verifyMask(function_ref<InFlightDiagnostic()> emitError, MaskAttr mask) {
  int64_t maxSeq = mask.getMaxSeq();
  if (maxSeq < 0 || maxSeq > kMaxExtent)
    return emitError() << "mask max_seq must be in 0.." << kMaxExtent << ", found " << maxSeq;
  // A size the spec gives as a term's argument: present means 1 or more, as
  // the spec's `sliding_window(size = W)` takes it, and no more than a
  // Halide index holds (or the model's max_seq, when the mask records it).
  int64_t sizeLimit = maxSeq > 0 ? maxSeq : kMaxExtent;
  auto checkSize = [&](StringRef name, std::optional<int64_t> size) -> LogicalResult {
    if (!size || (*size >= 1 && *size <= sizeLimit))
      return success();
    return emitError() << "mask " << name << " must be in 1.." << sizeLimit << ", found "
                       << *size << " (a mask without the term leaves it out)";
  };
  if (failed(checkSize("window", mask.getWindow())) ||
      failed(checkSize("dilated window", mask.getDilated())))
    return failure();
  if (mask.getDilation() < 1 || mask.getDilation() > kMaxExtent)
    return emitError() << "mask dilation must be >= 1, found " << mask.getDilation();
  if (mask.getDilation() != 1 && !mask.getDilated())
    return emitError() << "mask dilation " << mask.getDilation()
                       << " needs a dilated window (dilated = N)";
  if (std::optional<int64_t> perRow = mask.getRandomPerRow()) {
    // The kernels unroll one step per random key (compiler/halide), hence
    // the spec's bound.
    if (*perRow < 1 || *perRow > std::min(kMaxRandomPerRow, sizeLimit))
      return emitError() << "mask random_per_row must be in 1.."
                         << std::min(kMaxRandomPerRow, sizeLimit) << ", found " << *perRow
                         << " (a mask without random keys leaves it out)";
  } else if (mask.getRandomSeed() != 0) {
    return emitError() << "mask random_seed needs random keys (random_per_row = N)";
  }
  if ((mask.getRandomPerRow() || !mask.getGlobals().empty()) && maxSeq <= 0)
    return emitError() << "a random or global mask needs max_seq > 0";
  for (int64_t token : mask.getGlobals())
    if (token < 0 || token >= maxSeq)
      return emitError() << "global token " << token << " is outside [0, " << maxSeq << ")";
  return success();
}

void TMDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/tm/TMAttrs.cpp.inc"
      >();
}
