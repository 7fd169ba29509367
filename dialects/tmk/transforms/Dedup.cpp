//===- Dedup.cpp - Share kernels that compile to the same code ------------===//
//
// Identical-layer deduplication: two kernels with the same kind and static
// attributes are the same Halide pipeline, so every call of the later one is
// pointed at the first and the later one is erased. The twelve blocks of
// GPT-2 small then call one set of kernels, compiled once. The kernels kept
// are renamed by kind, in order of definition.
//
//===----------------------------------------------------------------------===//

#include "dialects/tm/TMOps.h"
#include "dialects/tmk/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace tmc::tmk {
#define GEN_PASS_DEF_TMKDEDUP
#include "dialects/tmk/Passes.h.inc"
} // namespace tmc::tmk

using namespace mlir;
using namespace tmc;

namespace {

// `tm::` would also find C's struct ::tm through `using namespace tmc`, which
// clang (it builds tests/fuzz) reports as ambiguous.
namespace tm = tmc::tm;

struct Dedup : tmc::tmk::impl::TMKDedupBase<Dedup> {
  using TMKDedupBase::TMKDedupBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseMap<DictionaryAttr, tmk::KernelOp> first;
    llvm::DenseMap<StringAttr, tmk::KernelOp> target; // every kernel -> the one kept
    llvm::SmallVector<tmk::KernelOp> duplicates;
    for (auto kernel : module.getOps<tmk::KernelOp>()) {
      auto [it, inserted] = first.try_emplace(kernel.getSignatureAttrs(), kernel);
      target[kernel.getSymNameAttr()] = it->second;
      if (!inserted)
        duplicates.push_back(kernel);
    }
    for (tmk::KernelOp kernel : duplicates)
      kernel.erase();
    // The kept kernels are renamed by kind in order (linear, linear_1, ...):
    // the names lowering made up count every call, shared or not.
    llvm::StringSet<> taken;
    for (Operation &op : module.getBody()->getOperations())
      if (auto name = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
          name && !isa<tmk::KernelOp>(op))
        taken.insert(name.getValue());
    llvm::StringMap<unsigned> perKind;
    for (auto kernel : module.getOps<tmk::KernelOp>()) {
      StringRef kind = tmk::stringifyKernelKind(kernel.getKind());
      std::string name;
      do {
        unsigned n = perKind[kind]++;
        name = n ? (kind + "_" + llvm::Twine(n)).str() : kind.str();
      } while (taken.contains(name));
      kernel.setSymName(name);
    }
    llvm::DenseMap<Operation *, unsigned> calls;
    module.walk([&](tmk::CallOp call) {
      auto it = target.find(call.getKernelAttr().getAttr());
      if (it == target.end())
        return;
      call.setKernelAttr(FlatSymbolRefAttr::get(it->second.getSymNameAttr()));
      ++calls[it->second];
    });
    if (explain)
      for (auto kernel : module.getOps<tmk::KernelOp>())
        emitRemark(kernel.getLoc()) << tm::originPrefix(kernel.getLoc()) << "kernel @"
                                    << kernel.getSymName() << " (" << tmk::stringifyKernelKind(kernel.getKind())
                                    << ") serves " << calls.lookup(kernel) << " call"
                                    << (calls.lookup(kernel) == 1 ? "" : "s");
  }
};

} // namespace
