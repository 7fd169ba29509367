//===- LowerToKernels.cpp - tm ops to tmk kernels and calls ---------------===//
//
// The tm -> tmk step: each compute op left after fusion is exactly one
// schedulable Halide pipeline, so it becomes one kernel definition (its kind
// and the constants its algorithm bakes in) and one call binding the op's
// operands, at the op's location. Every call gets a kernel of its own here;
// tmk-dedup shares them.
//
// A tm.rope becomes two kernels: a rope_table call, which computes each token
// row's cos and sin (half a head each) from the offset, and the rope call,
// which turns the rows by them. One table serves every rope of a function
// with the same offset, head_dim and theta (made at the offset's definition,
// the first time one is needed): its sines and cosines were 40% of a rope
// kernel's time when each call computed them (two calls a layer). The rope
// itself then reads no offset, so a batch's sequences share its calls.
//
//===----------------------------------------------------------------------===//

#include "dialects/tm/TMOps.h"
#include "dialects/tmk/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>
#include <tuple>

namespace tmc::tmk {
#define GEN_PASS_DEF_TMLOWERTOKERNELS
#include "dialects/tmk/Passes.h.inc"
} // namespace tmc::tmk

using namespace mlir;
using namespace tmc;

namespace {

// `tm::` would also find C's struct ::tm through `using namespace tmc`, which
// clang (it builds tests/fuzz) reports as ambiguous.
namespace tm = tmc::tm;

int64_t width(Value value) { return cast<ShapedType>(value.getType()).getDimSize(1); }

int64_t rows(Value value) { return cast<ShapedType>(value.getType()).getDimSize(0); }

/// The storage precision of the cache a value was read from ("" for f32:
/// a cache without `precision`, or a value that is no cache's).
StringRef cachePrecisionOf(Value value) {
  // The walk may have lowered the cache op before its reader: tm or tmk.
  Operation *producer = value.getDefiningOp();
  if (!isa_and_nonnull<tm::CacheAppendOp, tm::CacheReadOp, tmk::CacheAppendOp, tmk::CacheReadOp>(
          producer))
    return "";
  auto precision = producer->getAttrOfType<StringAttr>("precision");
  return precision ? precision.getValue() : StringRef();
}

/// How the keys and values an attention reads are stored ("" for f32): one
/// kernel widens both the same way, so they must agree.
FailureOr<StringRef> storedPrecision(tm::AttentionOp attention) {
  StringRef keys = cachePrecisionOf(attention.getKey()),
            values = cachePrecisionOf(attention.getValue());
  if (keys == values)
    return keys;
  auto spelled = [](StringRef p) { return p.empty() ? StringRef("f32") : p; };
  return attention.emitOpError("reads keys stored as ")
         << spelled(keys) << " and values stored as " << spelled(values)
         << "; one attention kernel reads both at one precision";
}

/// The kind and static attributes of the kernel `op` runs as; failure for an
/// op that has no kernel.
FailureOr<tmk::KernelKind> describe(Operation *op, Builder &b, NamedAttrList &attrs) {
  auto i64 = [&](StringRef name, int64_t value) { attrs.set(name, b.getI64IntegerAttr(value)); };
  auto f64 = [&](StringRef name, double value) { attrs.set(name, b.getF64FloatAttr(value)); };
  auto str = [&](StringRef name, StringRef value) { attrs.set(name, b.getStringAttr(value)); };
  auto unit = [&](StringRef name, bool set) {
    if (set)
      attrs.set(name, b.getUnitAttr());
  };
  if (op->getNumResults() != 1 || !isa<ShapedType>(op->getResult(0).getType()) ||
      ShapedType::isDynamic(width(op->getResult(0))))
    return failure();
  i64("width", width(op->getResult(0)));
  return llvm::TypeSwitch<Operation *, FailureOr<tmk::KernelKind>>(op)
      .Case([&](tm::EmbedOp embed) {
        i64("table_rows", rows(embed.getTable()));
        f64("scale", embed.getScale().convertToDouble());
        str("position", embed.getPosition());
        if (embed.getPositions())
          i64("position_rows", rows(embed.getPositions()));
        return tmk::KernelKind::embed;
      })
      .Case([&](tm::AddPositionsOp positions) {
        str("position", positions.getKind());
        if (positions.getTable())
          i64("position_rows", rows(positions.getTable()));
        return tmk::KernelKind::positions;
      })
      .Case([&](tm::AddSegmentsOp segments) {
        i64("position_rows", rows(segments.getTable()));
        return tmk::KernelKind::segments;
      })
      .Case([&](tm::LinearOp linear) {
        i64("in_width", width(linear.getInput()));
        str("activation", linear.getActivation());
        unit("bias", static_cast<bool>(linear.getBias()));
        unit("residual", static_cast<bool>(linear.getResidual()));
        // Only when not f32: absent and "f32" would be two signatures to
        // tmk-dedup for one kernel.
        if (linear.getEffectivePrecision() != "f32")
          str("precision", linear.getEffectivePrecision());
        return tmk::KernelKind::linear;
      })
      .Case([&](tm::AttentionOp attention) -> FailureOr<tmk::KernelKind> {
        i64("heads", attention.getHeads());
        i64("kv_heads", attention.getKvHeads());
        i64("head_dim", attention.getHeadDim());
        f64("scale", attention.getScale().convertToDouble());
        attrs.set("mask", attention.getMask());
        unit("alibi", attention.getAlibi());
        // lower() reported keys and values stored apart already.
        FailureOr<StringRef> stored = storedPrecision(attention);
        if (failed(stored))
          return failure();
        if (!stored->empty())
          str("kv_precision", *stored);
        return tmk::KernelKind::attention;
      })
      .Case([&](tm::AddOp) { return tmk::KernelKind::add; })
      .Case([&](tm::ActivationOp activation) {
        str("activation", activation.getKind());
        return tmk::KernelKind::activation;
      })
      .Case([&](tm::GatedActivationOp gated) {
        str("activation", gated.getKind());
        return tmk::KernelKind::gated_activation;
      })
      .Case([&](tm::NormOp norm) {
        str("variant", norm.getKind());
        f64("eps", norm.getEps().convertToDouble());
        unit("bias", static_cast<bool>(norm.getBias()));
        return tmk::KernelKind::norm;
      })
      .Case([&](tm::AddNormOp norm) {
        str("variant", norm.getKind());
        f64("eps", norm.getEps().convertToDouble());
        unit("bias", static_cast<bool>(norm.getBias()));
        return tmk::KernelKind::add_norm;
      })
      .Case([&](tm::RopeOp rope) {
        // theta is its table's (ropeTable).
        i64("heads", rope.getHeads());
        i64("head_dim", rope.getHeadDim());
        return tmk::KernelKind::rope;
      })
      .Case([&](tm::SeqProjectOp project) {
        i64("table_rows", rows(project.getProjection()));
        i64("position_rows", width(project.getProjection()));
        unit("length", static_cast<bool>(project.getLength()));
        return tmk::KernelKind::seq_project;
      })
      .Case([&](tm::PoolOp pool) {
        str("variant", pool.getKind());
        return tmk::KernelKind::pool;
      })
      .Default([](Operation *) { return failure(); });
}

/// The rope_table calls made so far: by offset value, head_dim and theta.
using RopeTables = std::map<std::tuple<void *, int64_t, double>, Value>;

struct LowerToKernels : tmc::tmk::impl::TMLowerToKernelsBase<LowerToKernels> {
  RopeTables ropeTables;

  /// The rope_table rows of `rope`'s offset, head_dim and theta: made at
  /// the offset's definition (the start of its block for an argument) when
  /// no rope before this one needed them.
  FailureOr<Value> ropeTable(tm::RopeOp rope, SymbolTable &symbols, OpBuilder &kernels) {
    Value offset = rope.getOffset();
    const double theta = rope.getTheta().convertToDouble();
    auto key = std::make_tuple(offset.getAsOpaquePointer(), static_cast<int64_t>(rope.getHeadDim()),
                               theta);
    if (auto it = ropeTables.find(key); it != ropeTables.end())
      return it->second;
    OpBuilder b(rope.getContext());
    if (auto argument = dyn_cast<BlockArgument>(offset))
      b.setInsertionPointToStart(argument.getOwner());
    else
      b.setInsertionPointAfter(offset.getDefiningOp());
    // The first rope's spec line, not its value name: a table is no value
    // of the spec (tmc verify compares named values).
    Location loc = tm::withoutNames(rope.getLoc());
    NamedAttrList attrs;
    attrs.set("width", b.getI64IntegerAttr(rope.getHeadDim()));
    attrs.set("head_dim", b.getI64IntegerAttr(rope.getHeadDim()));
    attrs.set("theta", b.getF64FloatAttr(theta));
    attrs.set(SymbolTable::getSymbolAttrName(), b.getStringAttr("rope_table"));
    attrs.set("kind", tmk::KernelKindAttr::get(b.getContext(), tmk::KernelKind::rope_table));
    auto kernel = kernels.create<tmk::KernelOp>(loc, TypeRange(), ValueRange(), attrs.getAttrs());
    symbols.insert(kernel);
    kernels.setInsertionPointAfter(kernel);
    if (failed(mlir::verify(kernel)))
      return failure();
    auto rows = RankedTensorType::get({cast<ShapedType>(rope.getInput().getType()).getDimSize(0),
                                       static_cast<int64_t>(rope.getHeadDim())},
                                      b.getF32Type());
    Value table =
        b.create<tmk::CallOp>(
             loc, TypeRange{rows}, ValueRange{offset},
             ArrayRef<NamedAttribute>{
                 b.getNamedAttr("kernel", FlatSymbolRefAttr::get(kernel.getSymNameAttr())),
                 b.getNamedAttr("from", b.getStringAttr(rope->getName().getStringRef()))})
            .getResult();
    ropeTables[key] = table;
    return table;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ropeTables.clear();
    SymbolTable symbols(module);
    OpBuilder kernels(module.getContext());
    // Kernels go before the functions, in the order of their first call.
    kernels.setInsertionPointToStart(module.getBody());
    auto result = module.walk([&](Operation *op) {
      if (!isa<tm::TMDialect>(op->getDialect()))
        return WalkResult::advance();
      return succeeded(lower(op, symbols, kernels)) ? WalkResult::advance()
                                                    : WalkResult::interrupt();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult lower(Operation *op, SymbolTable &symbols, OpBuilder &kernels) {
    OpBuilder b(op);
    Operation *replacement = nullptr;
    if (auto weight = dyn_cast<tm::WeightOp>(op)) {
      replacement = b.create<tmk::WeightOp>(op->getLoc(), weight.getType(), weight.getName());
    } else if (auto concat = dyn_cast<tm::ConcatOp>(op)) {
      replacement = b.create<tmk::ConcatOp>(op->getLoc(), concat.getType(), concat.getInputs());
    } else if (auto split = dyn_cast<tm::SplitOp>(op)) {
      replacement = b.create<tmk::SplitOp>(op->getLoc(), split.getResultTypes(), split.getInput());
    } else if (auto append = dyn_cast<tm::CacheAppendOp>(op)) {
      replacement = b.create<tmk::CacheAppendOp>(
          op->getLoc(), append.getType(), append.getInput(), append.getOffset(),
          append.getNameAttr(), append.getCapacityAttr(), append.getPrecisionAttr(),
          /*keep=*/nullptr);
    } else if (auto read = dyn_cast<tm::CacheReadOp>(op)) {
      replacement = b.create<tmk::CacheReadOp>(op->getLoc(), read.getType(), read.getNameAttr(),
                                               read.getCapacityAttr(), read.getPrecisionAttr());
    } else {
      if (auto attention = dyn_cast<tm::AttentionOp>(op);
          attention && failed(storedPrecision(attention)))
        return failure();
      SmallVector<Value> operands(op->getOperands());
      if (auto rope = dyn_cast<tm::RopeOp>(op)) {
        // The table's kernel and call come first, as they run.
        FailureOr<Value> table = ropeTable(rope, symbols, kernels);
        if (failed(table))
          return failure();
        operands = {rope.getInput(), *table};
      }
      NamedAttrList attrs;
      FailureOr<tmk::KernelKind> kind = describe(op, b, attrs);
      if (failed(kind))
        return op->emitOpError("cannot be mapped to a kernel");
      attrs.set(SymbolTable::getSymbolAttrName(),
                b.getStringAttr(tmk::stringifyKernelKind(*kind)));
      attrs.set("kind", tmk::KernelKindAttr::get(b.getContext(), *kind));
      auto kernel = kernels.create<tmk::KernelOp>(op->getLoc(), TypeRange(), ValueRange(),
                                                  attrs.getAttrs());
      symbols.insert(kernel); // a unique name: linear, linear_0, linear_1, ...
      kernels.setInsertionPointAfter(kernel);
      if (failed(mlir::verify(kernel)))
        return failure();
      replacement = b.create<tmk::CallOp>(
          op->getLoc(), TypeRange{op->getResult(0).getType()}, operands,
          ArrayRef<NamedAttribute>{
              b.getNamedAttr("kernel", FlatSymbolRefAttr::get(kernel.getSymNameAttr())),
              b.getNamedAttr("from", b.getStringAttr(op->getName().getStringRef()))});
    }
    op->replaceAllUsesWith(replacement);
    op->erase();
    return success();
  }
};

} // namespace
