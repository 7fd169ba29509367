//===- TiedTablePrecision.cpp - A tied table looked up in its head's precision ===//
//
// A tied LM head multiplies the token table as its weight: under precision
// bf16, int8 or q4 the executable packs the table once, in that precision,
// for the head's GEMM. An embedding lookup that read the table in f32 would
// keep a second copy of it, 2x to 7x the packed one's size, resident beside
// it and in every weights file (GPT-2 small: 154 MB of a 243 MB int8 file).
// So each embedding that reads a table which linears multiply in one reduced
// precision P, and which nothing else reads, gets `precision = P`: its
// kernel reads the head's packed copy and dequantizes each row it looks up,
// as llama.cpp's quantized token tables are read (docs/spec-language.md,
// `precision`). A table some other kernel reads, or linears multiply in two
// precisions, is left f32.
//
//===----------------------------------------------------------------------===//

#include "dialects/tm/TMOps.h"
#include "dialects/tmk/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

namespace tmc::tmk {
#define GEN_PASS_DEF_TMKTIEDTABLEPRECISION
#include "dialects/tmk/Passes.h.inc"
} // namespace tmc::tmk

using namespace mlir;
using namespace tmc;

namespace {

// `tm::` would also find C's struct ::tm through `using namespace tmc`, which
// clang (it builds tests/fuzz) reports as ambiguous.
namespace tm = tmc::tm;

/// The manifest name of a weight operand, or "" for a value that is none.
StringRef weightName(Value value) {
  auto weight = value.getDefiningOp<tmk::WeightOp>();
  return weight ? weight.getName() : StringRef();
}

/// Operand index of an embedding's token table.
constexpr unsigned kTableOperand = 2;
/// Operand index of a linear's weight.
constexpr unsigned kWeightOperand = 1;

struct TiedTablePrecision : tmc::tmk::impl::TMKTiedTablePrecisionBase<TiedTablePrecision> {
  using TMKTiedTablePrecisionBase::TMKTiedTablePrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Per weight name: the precision linears multiply it in ("" until one
    // does), and whether it stays f32 for the lookups (some other reader,
    // or two precisions).
    struct Readers {
      std::string precision;
      bool keepF32 = false;
    };
    llvm::StringMap<Readers> readers;
    llvm::SmallVector<tmk::CallOp> lookups;
    // One table for every lookup: before tmk-dedup each call has a kernel of
    // its own, and CallOp::getKernelOp scans the module for each.
    SymbolTable symbols(module);
    auto kernelOf = [&](tmk::CallOp call) {
      return symbols.lookup<tmk::KernelOp>(call.getKernelAttr().getAttr());
    };
    module.walk([&](tmk::CallOp call) {
      tmk::KernelOp kernel = kernelOf(call);
      if (!kernel)
        return;
      for (auto [index, operand] : llvm::enumerate(call.getArgs())) {
        StringRef name = weightName(operand);
        if (name.empty())
          continue;
        Readers &entry = readers[name];
        if (kernel.getKind() == tmk::KernelKind::embed && index == kTableOperand) {
          if (kernel.getPrecision().value_or("f32") != "f32")
            entry.keepF32 = true; // already decided: not this pass's input
          lookups.push_back(call);
        } else if (kernel.getKind() == tmk::KernelKind::linear && index == kWeightOperand) {
          std::string precision = kernel.getPrecision().value_or("f32").str();
          if (!entry.precision.empty() && entry.precision != precision)
            entry.keepF32 = true;
          entry.precision = precision;
        } else {
          entry.keepF32 = true;
        }
      }
    });
    llvm::SmallPtrSet<Operation *, 4> retired;
    for (tmk::CallOp call : lookups) {
      const Readers &entry = readers[weightName(call.getArgs()[kTableOperand])];
      if (entry.keepF32 || entry.precision.empty() || entry.precision == "f32")
        continue;
      // A kernel of its own (tmk-dedup shares equal ones again), so that a
      // kernel some other lookup shares is never changed under it.
      tmk::KernelOp kernel = kernelOf(call);
      OpBuilder builder(kernel);
      auto reduced = cast<tmk::KernelOp>(builder.clone(*kernel));
      reduced.setPrecision(entry.precision);
      symbols.insert(reduced);
      call.setKernelAttr(FlatSymbolRefAttr::get(reduced.getSymNameAttr()));
      retired.insert(kernel);
      if (explain)
        emitRemark(call.getLoc()) << tm::originPrefix(call.getLoc()) << "the lookup reads '"
                                  << weightName(call.getArgs()[kTableOperand])
                                  << "' as the tied head packs it, in " << entry.precision;
    }
    // Kernels no call names any more.
    for (Operation *kernel : retired)
      if (SymbolTable::symbolKnownUseEmpty(cast<tmk::KernelOp>(kernel), module))
        kernel->erase();
  }
};

} // namespace
