//===- FuseRopeEpilogue.cpp - Rotary positions as a GEMM epilogue ---------===//
//
// A rope call whose rows are a linear's outputs (the q projection, or the q
// and k parts of a fused q/k/v projection) is folded into that linear: the
// linear gets `rope_columns` (its first outputs, whole heads of `head_dim`)
// and reads the rope's table rows as its last input, and turns those
// outputs as it stores them (compiler/halide/LowerLinear.cpp). The rope's
// separate pass over q and k, a kernel call each per layer, goes; the
// values are the same (the split's parts keep their names, so `tmc verify`
// compares them as before).
//
// Fused only where every rotated part is a leading part of the projection,
// read by nothing but its rope, and all of them use one table: the rotated
// columns are then a prefix [0, rope_columns) turned in heads of one size.
//
//===----------------------------------------------------------------------===//

#include "dialects/tm/TMOps.h"
#include "dialects/tmk/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseSet.h"

namespace tmc::tmk {
#define GEN_PASS_DEF_TMKFUSEROPEEPILOGUE
#include "dialects/tmk/Passes.h.inc"
} // namespace tmc::tmk

using namespace mlir;
using namespace tmc;

namespace {

namespace tm = tmc::tm;

/// The kernels by name. A call's getKernelOp() searches the module's
/// operations one by one: over the calls of a 4096-layer spec that was
/// quadratic (minutes), where the table is a hash map.
struct Kernels {
  SymbolTable &symbols;
  tmk::KernelOp of(tmk::CallOp call) const {
    return symbols.lookup<tmk::KernelOp>(call.getKernelAttr().getValue());
  }
  bool isRope(Operation *op) const {
    auto call = dyn_cast<tmk::CallOp>(op);
    tmk::KernelOp kernel = call ? of(call) : tmk::KernelOp();
    return kernel && kernel.getKind() == tmk::KernelKind::rope;
  }
  /// The rope call that is the only reader of `value`, if any.
  tmk::CallOp soleRope(Value value) const {
    if (!value.hasOneUse() || !isRope(*value.getUsers().begin()))
      return {};
    auto call = cast<tmk::CallOp>(*value.getUsers().begin());
    return call.getArgs()[0] == value ? call : tmk::CallOp();
  }
};

/// The ropes a fusion folds: the leading parts they turn, one table.
struct RopePrefix {
  SmallVector<tmk::CallOp> ropes; ///< part i's rope, for the first ropes.size() parts
  int64_t columns = 0;
  int64_t headDim = 0;
  Value table;
};

int64_t widthOf(Value value) { return cast<ShapedType>(value.getType()).getDimSize(1); }

/// Why `linear`'s result cannot take its ropes as an epilogue (empty: it
/// can, and `prefix` says which).
std::string matchPrefix(const Kernels &kernels, tmk::CallOp linear, tmk::KernelOp kernel,
                        RopePrefix &prefix) {
  if (kernel.getActivation() != "none" || kernel.getResidual())
    return "the linear already ends in an activation or a residual sum";
  if (kernel.getRopeColumns())
    return "the linear already turns its outputs";
  Value result = linear.getResult();
  SmallVector<Value> parts;
  if (kernels.soleRope(result)) {
    parts.push_back(result);
  } else if (result.hasOneUse()) {
    auto split = dyn_cast<tmk::SplitOp>(*result.getUsers().begin());
    if (!split)
      return "the linear's result has readers other than one rope or one split";
    parts.assign(split.getResults().begin(), split.getResults().end());
  } else {
    return "the linear's result has readers other than one rope or one split";
  }
  bool ended = false;
  for (Value part : parts) {
    tmk::CallOp rope = kernels.soleRope(part);
    if (!rope) {
      ended = true;
      continue;
    }
    if (ended)
      return "a rotated part follows one that is not rotated";
    tmk::KernelOp ropeKernel = kernels.of(rope);
    int64_t headDim = static_cast<int64_t>(*ropeKernel.getHeadDim());
    Value table = rope.getArgs()[1];
    if (prefix.table && (table != prefix.table || headDim != prefix.headDim))
      return "its parts are turned with different tables";
    prefix.table = table;
    prefix.headDim = headDim;
    prefix.ropes.push_back(rope);
    prefix.columns += widthOf(part);
  }
  if (prefix.ropes.empty())
    return "no part of its result is turned by a rope alone";
  if (kernel.getWidth() % static_cast<uint64_t>(prefix.headDim) != 0)
    return "its width is not a whole number of heads";
  // The table must be computed before the linear runs.
  if (Operation *tableCall = prefix.table.getDefiningOp();
      tableCall && tableCall->getBlock() == linear->getBlock() &&
      !tableCall->isBeforeInBlock(linear))
    return "its rope table is computed after the linear";
  return "";
}

/// Whether a rope reads `linear`'s result or a part of it: a linear whose
/// fusion was declined is worth a remark only then.
bool feedsRope(const Kernels &kernels, tmk::CallOp linear) {
  for (Operation *user : linear.getResult().getUsers()) {
    if (kernels.isRope(user))
      return true;
    if (auto split = dyn_cast<tmk::SplitOp>(user))
      for (Value part : split.getResults())
        for (Operation *reader : part.getUsers())
          if (kernels.isRope(reader))
            return true;
  }
  return false;
}

struct FuseRopeEpilogue : tmc::tmk::impl::TMKFuseRopeEpilogueBase<FuseRopeEpilogue> {
  using TMKFuseRopeEpilogueBase::TMKFuseRopeEpilogueBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    Kernels kernels{symbols};
    SmallVector<tmk::CallOp> linears;
    module.walk([&](tmk::CallOp call) {
      tmk::KernelOp kernel = kernels.of(call);
      if (kernel && kernel.getKind() == tmk::KernelKind::linear)
        linears.push_back(call);
    });
    for (tmk::CallOp linear : linears) {
      tmk::KernelOp kernel = kernels.of(linear);
      RopePrefix prefix;
      std::string why = matchPrefix(kernels, linear, kernel, prefix);
      if (!why.empty()) {
        if (explain && feedsRope(kernels, linear))
          emitRemark(linear.getLoc()) << tm::originPrefix(linear.getLoc())
                                      << "rope not fused into this linear's epilogue: " << why;
        continue;
      }
      if (failed(fuse(linear, kernel, prefix, symbols)))
        return signalPassFailure();
    }
    // Kernels no call reads any more (a plain linear, the ropes) go.
    llvm::DenseSet<StringAttr> called;
    module.walk([&](tmk::CallOp call) { called.insert(call.getKernelAttr().getAttr()); });
    for (auto kernel : llvm::make_early_inc_range(module.getOps<tmk::KernelOp>()))
      if (!called.contains(kernel.getSymNameAttr()))
        symbols.erase(kernel);
  }

  LogicalResult fuse(tmk::CallOp linear, tmk::KernelOp kernel, const RopePrefix &prefix,
                     SymbolTable &symbols) {
    // A kernel of its own (tmk-dedup shares it between layers).
    OpBuilder kernels(kernel);
    kernels.setInsertionPointAfter(kernel);
    auto fused = cast<tmk::KernelOp>(kernels.clone(*kernel));
    fused.setRopeColumns(static_cast<uint64_t>(prefix.columns));
    fused.setHeadDim(static_cast<uint64_t>(prefix.headDim));
    symbols.insert(fused);
    if (failed(mlir::verify(fused)))
      return failure();
    OpBuilder b(linear);
    SmallVector<Value> args(linear.getArgs());
    args.push_back(prefix.table);
    auto call =
        b.create<tmk::CallOp>(linear.getLoc(), linear.getResult().getType(),
                              FlatSymbolRefAttr::get(fused.getSymNameAttr()), args,
                              linear.getFromAttr(), linear.getArenaAttr(), linear.getInPlaceAttr());
    if (explain)
      emitRemark(linear.getLoc()) << tm::originPrefix(linear.getLoc()) << "fused "
                                  << prefix.ropes.size() << " rope"
                                  << (prefix.ropes.size() == 1 ? "" : "s")
                                  << " into this linear's epilogue (" << prefix.columns
                                  << " columns in heads of " << prefix.headDim << ")";
    linear.getResult().replaceAllUsesWith(call.getResult());
    for (tmk::CallOp rope : prefix.ropes) {
      rope.getResult().replaceAllUsesWith(rope.getArgs()[0]);
      rope.erase();
    }
    linear.erase();
    return success();
  }
};

} // namespace
