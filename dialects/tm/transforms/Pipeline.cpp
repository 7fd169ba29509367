//===- Pipeline.cpp - The model-level optimization pipeline ---------------===//

#include "dialects/tm/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void tmc::tm::buildOptimizationPipeline(OpPassManager &pm,
                                        const OptimizationOptions &options) {
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  // Kernels need every width static; hand-written IR may leave some open.
  funcPm.addPass(createTMInferShapes({options.explain}));
  funcPm.addPass(createCanonicalizerPass());
  if (options.optLevel > 0) {
    funcPm.addPass(createTMFuseEmbeddingPositions({options.explain}));
    funcPm.addPass(createTMFuseLinearActivation({options.explain}));
    funcPm.addPass(createTMFuseResidualNorm({options.explain}));
    funcPm.addPass(createTMFuseLinearResidual({options.explain}));
    funcPm.addPass(createTMFuseProjections({options.explain}));
  }
  funcPm.addPass(createCSEPass());
}

void tmc::tm::registerAllPasses() {
  registerTMPasses();
  PassPipelineRegistration<>(
      "tm-optimize", "The model-level pipeline of `tmc compile` (-O2)",
      [](OpPassManager &pm) { buildOptimizationPipeline(pm, {}); });
}
