//===- FuseProjections.cpp - Linears over one input as one GEMM -----------===//
//
// q, k and v are three GEMMs over the same rows; so are a gated FFN's gate
// and up, and the k and v of every cross-attention layer over the encoder's
// output. Stacking their weights (tm.concat, built once at load time) makes
// them one GEMM with a wider N: the input is read once, the kernel launches
// once, and N = 3 x 768 splits into 36 panels where 768 gave 12, which two
// threads share more evenly. tm.split then hands every consumer its columns
// of the result in place (the kernels read them with the wide row stride).
//
//===----------------------------------------------------------------------===//

#include "dialects/tm/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

#include <tuple>

namespace tmc::tm {
#define GEN_PASS_DEF_TMFUSEPROJECTIONS
#include "dialects/tm/Passes.h.inc"
} // namespace tmc::tm

using namespace mlir;
using namespace tmc::tm;

namespace {

/// "a.b.q", "a.b.k", "a.b.v" -> "a.b.q+k+v": the longest prefix the names
/// share that ends in '.', then each name's own part. Empty when a linear
/// has no name.
std::string combinedName(ArrayRef<LinearOp> group) {
  SmallVector<std::string> names;
  for (LinearOp linear : group) {
    names.push_back(originName(linear.getLoc()));
    if (names.back().empty())
      return "";
  }
  StringRef first = names.front();
  size_t common = first.size();
  for (StringRef name : names) {
    size_t same = 0;
    while (same < common && same < name.size() && name[same] == first[same])
      ++same;
    common = same;
  }
  size_t prefix = first.take_front(common).rfind('.');
  prefix = prefix == StringRef::npos ? 0 : prefix + 1;
  std::string out = names.front().substr(0, prefix);
  for (auto [index, name] : llvm::enumerate(names))
    out += (index ? "+" : "") + name.substr(prefix);
  return out;
}

/// Why `linear` cannot join a fused projection, or empty if it can.
std::string soloReason(LinearOp linear) {
  if (linear.getResidual())
    return "it adds a residual, which is one stream per linear";
  if (!linear.getWeight().getDefiningOp<WeightOp>() ||
      (linear.getBias() && !linear.getBias().getDefiningOp<WeightOp>()))
    return "its weight or bias is not a tm.weight that can be stacked at load time";
  for (Operation *user : linear->getUsers())
    if (user->hasTrait<OpTrait::IsTerminator>())
      return "the function returns its result, which must stay a buffer of its own";
  return "";
}

struct FuseProjectionsPass : tmc::tm::impl::TMFuseProjectionsBase<FuseProjectionsPass> {
  using tmc::tm::impl::TMFuseProjectionsBase<FuseProjectionsPass>::TMFuseProjectionsBase;

  /// Where each op stood in its block when the pass began, numbered 2, 4,
  /// 6, ...: hoistBefore compares the weight ops and the linears here, not
  /// with Operation::isBeforeInBlock, which renumbers the whole block once
  /// the few gaps MLIR leaves at an insertion point are used up, i.e. on
  /// nearly every fusion: that made the pass quadratic in the layers (80% of
  /// a 4096-layer GPT-2's 30 s `tmc check` was spent renumbering).
  llvm::DenseMap<Operation *, int64_t> blockPosition;

  /// Moves the (operand-free, pure) weight op defining `value` before `point`
  /// when it comes after it, so the stacked weight can be built there.
  /// `point` is the first linear of a group and `def` a tm.weight, both in the
  /// block when the pass began (a fusion creates neither), and a moved op gets
  /// the position just before `point` (the odd number between it and its
  /// original predecessor), which keeps every later comparison right.
  void hoistBefore(Value value, Operation *point) {
    if (!value)
      return;
    Operation *def = value.getDefiningOp();
    if (!def || def->getBlock() != point->getBlock())
      return;
    int64_t pointPosition = blockPosition.at(point);
    if (blockPosition.at(def) > pointPosition) {
      def->moveBefore(point);
      blockPosition[def] = pointPosition - 1;
    }
  }

  void runOnOperation() override {
    blockPosition.clear();
    getOperation().walk([&](Block *block) {
      int64_t position = 0;
      for (Operation &op : *block)
        blockPosition[&op] = position += 2;
    });
    // Linears by input, in block order; each input's candidates by epilogue.
    llvm::MapVector<Value, SmallVector<LinearOp>> byInput;
    getOperation().walk([&](LinearOp linear) { byInput[linear.getInput()].push_back(linear); });
    for (auto &[input, linears] : byInput) {
      if (linears.size() < 2)
        continue;
      // One GEMM has one epilogue and one precision: a bf16 projection
      // stacked with an f32 one would change how one of them multiplies.
      llvm::MapVector<std::tuple<StringRef, unsigned, StringRef>, SmallVector<LinearOp>> groups;
      bool mixedPrecision = false;
      for (LinearOp linear : linears) {
        std::string reason = soloReason(linear);
        mixedPrecision |= linear.getEffectivePrecision() != linears.front().getEffectivePrecision();
        if (reason.empty()) {
          groups[{linear.getActivation(), linear.getBias() ? 1u : 0u,
                  linear.getEffectivePrecision()}]
              .push_back(linear);
        } else if (explain) {
          emitRemark(linear.getLoc()) << originPrefix(linear.getLoc())
                                      << "not fused with the other linears of its input: "
                                      << reason;
        }
      }
      for (auto &[epilogue, group] : groups) {
        if (group.size() >= 2) {
          fuse(group);
        } else if (explain && groups.size() > 1) {
          auto [activation, bias, precision] = epilogue;
          InFlightDiagnostic remark = emitRemark(group.front().getLoc());
          remark << originPrefix(group.front().getLoc())
                 << "not fused with the other linears of its input: its epilogue";
          // The f32-only wording stays as it was when no precision differs.
          if (mixedPrecision)
            remark << " and precision";
          remark << " (" << activation << (bias ? ", bias" : ", no bias");
          if (mixedPrecision)
            remark << ", " << precision;
          remark << ") differ" << (mixedPrecision ? "" : "s") << " from theirs";
        }
      }
    }
  }

  void fuse(ArrayRef<LinearOp> group) {
    LinearOp first = group.front();
    OpBuilder b(first);
    SmallVector<Value> weights, biases;
    SmallVector<Location> locs, weightLocs;
    SmallVector<Type> partTypes;
    int64_t width = 0;
    for (LinearOp linear : group) {
      hoistBefore(linear.getWeight(), first);
      hoistBefore(linear.getBias(), first);
      weights.push_back(linear.getWeight());
      if (linear.getBias())
        biases.push_back(linear.getBias());
      locs.push_back(linear.getLoc());
      weightLocs.push_back(linear.getWeight().getLoc());
      partTypes.push_back(linear.getType());
      width += cast<ShapedType>(linear.getType()).getDimSize(1);
    }
    int64_t inWidth = cast<ShapedType>(first.getWeight().getType()).getDimSize(1);
    Location weightLoc = FusedLoc::get(b.getContext(), weightLocs);
    Value weight = b.create<ConcatOp>(weightLoc, RankedTensorType::get({width, inWidth},
                                                                       b.getF32Type()),
                                      weights);
    Value bias;
    if (!biases.empty())
      bias = b.create<ConcatOp>(weightLoc, RankedTensorType::get({width}, b.getF32Type()),
                                biases);
    std::string name = combinedName(group);
    Location loc = withoutNames(FusedLoc::get(b.getContext(), locs));
    if (!name.empty())
      loc = NameLoc::get(b.getStringAttr(name), loc);
    auto rows = cast<ShapedType>(first.getType()).getDimSize(0);
    auto fused = b.create<LinearOp>(loc, RankedTensorType::get({rows, width}, b.getF32Type()),
                                    first.getInput(), weight, bias, Value(),
                                    first.getActivationAttr(), first.getPrecisionAttr());
    // Part i of the split is located at linear i (metadata keeps the list
    // one entry per part: FusedLoc flattens only lists of equal metadata).
    auto split = b.create<SplitOp>(FusedLoc::get(b.getContext(), locs,
                                                 b.getStringAttr("tm.split")),
                                   partTypes, fused.getResult());
    for (auto [index, part] : llvm::enumerate(split.getResults())) {
      LinearOp linear = group[index];
      linear.getResult().replaceAllUsesWith(part);
      linear->erase();
    }
    if (explain) {
      InFlightDiagnostic remark = emitRemark(loc);
      remark << originPrefix(loc) << "fused " << group.size()
             << " linears that read the same input into one GEMM of " << width
             << " outputs (weights stacked once at load time; tm.split hands out the columns "
                "in place)";
    }
  }
};

} // namespace
