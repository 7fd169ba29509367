//===- TMDialect.cpp - The tm dialect -------------------------------------===//

#include "dialects/tm/TMDialect.h"
#include "dialects/tm/TMOps.h"

using namespace mlir;

#include "dialects/tm/TMDialect.cpp.inc"

void tmc::tm::TMDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dialects/tm/TMOps.cpp.inc"
      >();
}
