//===- Pipeline.cpp - From tm-opt to the kernel plan ----------------------===//

#include "dialects/tmk/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

void tmc::tmk::buildKernelPipeline(OpPassManager &pm, bool explain, unsigned optLevel) {
  pm.addPass(createTMLowerToKernels());
  pm.addPass(createTMKTiedTablePrecision({explain}));
  if (optLevel > 0) // -O0: no fusion (the tm passes' too)
    pm.addPass(createTMKFuseRopeEpilogue({explain}));
  pm.addPass(createTMKDedup({explain}));
  pm.addPass(createTMKDecodeVariants({explain}));
  pm.addPass(createTMKWindowCaches({explain}));
  pm.nest<func::FuncOp>().addPass(createTMKPlanBuffers({explain}));
}

void tmc::tmk::registerAllPasses() {
  registerTMKPasses();
  PassPipelineRegistration<>(
      "tmk-plan", "From an optimized tm module to the kernel plan of `tmc compile`",
      [](OpPassManager &pm) { buildKernelPipeline(pm); });
}
