//===- TMKDialect.cpp - The tmk (kernel-level) dialect --------------------===//

#include "dialects/tmk/TMKDialect.h"
#include "dialects/tmk/TMKOps.h"

using namespace mlir;

#include "dialects/tmk/TMKDialect.cpp.inc"

void tmc::tmk::TMKDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/tmk/TMKOps.cpp.inc"
      >();
}
