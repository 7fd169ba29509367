//===- tmc-opt.cpp - mlir-opt with the tm dialect and passes --------------===//
//
// The tool the lit tests drive: parses .mlir with tm and tmk ops, runs the passes or
// pipelines named on the command line, and prints the result.
//
//===----------------------------------------------------------------------===//

#include "dialects/tm/Passes.h"
#include "dialects/tm/TMDialect.h"
#include "dialects/tmk/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  tmc::tm::registerAllPasses();
  tmc::tmk::registerAllPasses();

  mlir::DialectRegistry registry;
  registry.insert<tmc::tm::TMDialect, tmc::tmk::TMKDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tmc optimizer driver\n", registry));
}
