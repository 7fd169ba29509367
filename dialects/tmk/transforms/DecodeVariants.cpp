//===- DecodeVariants.cpp - Kernels a decoding step runs with one row -----===//
//
// Prefill and decode run the same calls: a prompt with T rows, then every
// generated token with T = 1 against the P + T rows its self-attention reads
// from the key/value caches (tmk.cache_append). A function whose attention
// reads such a cache is a decoding function; the kernels it calls get
// `decode`, and Halide compiles each with a one-row variant next to the
// tiled prompt variant (Schedule::decodeVariant; LowerLinear.cpp). Kernels
// only an encoder runs (an encoder-only model, an encoder-decoder's @encode)
// never see a one-row step and keep the prompt variant alone.
//
//===----------------------------------------------------------------------===//

#include "dialects/tm/TMOps.h"
#include "dialects/tmk/Passes.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace tmc::tmk {
#define GEN_PASS_DEF_TMKDECODEVARIANTS
#include "dialects/tmk/Passes.h.inc"
} // namespace tmc::tmk

using namespace mlir;
using namespace tmc;

namespace {

// `tm::` would also find C's struct ::tm through `using namespace tmc`, which
// clang (it builds tests/fuzz) reports as ambiguous.
namespace tm = tmc::tm;

/// True when `func` attends over keys appended to a cache by this same run.
bool decodes(func::FuncOp func) {
  auto result = func.walk([](tmk::CallOp call) {
    tmk::KernelOp kernel = call.getKernelOp();
    if (kernel && kernel.getKind() == tmk::KernelKind::attention &&
        call.getArgs()[1].getDefiningOp<tmk::CacheAppendOp>())
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

struct DecodeVariants : tmc::tmk::impl::TMKDecodeVariantsBase<DecodeVariants> {
  using TMKDecodeVariantsBase::TMKDecodeVariantsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::SmallPtrSet<Operation *, 16> decodeKernels;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!decodes(func))
        continue;
      func.walk([&](tmk::CallOp call) {
        if (tmk::KernelOp kernel = call.getKernelOp())
          decodeKernels.insert(kernel);
      });
    }
    for (auto kernel : module.getOps<tmk::KernelOp>()) {
      bool decode = decodeKernels.contains(kernel);
      kernel.setDecode(decode);
      if (decode && explain)
        emitRemark(kernel.getLoc()) << tm::originPrefix(kernel.getLoc()) << "kernel @"
                                    << kernel.getSymName()
                                    << " also runs one row per decoding step: decode variant";
    }
  }
};

} // namespace
