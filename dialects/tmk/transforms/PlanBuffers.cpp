//===- PlanBuffers.cpp - Arena offsets from live ranges, in place if legal ===//
//
// Buffer liveness planning: every intermediate value lives in one activation
// arena from the call that writes it to its last use. Sizes and offsets are
// in units of T floats (a [T, W] value takes W units), so one static plan
// holds for every sequence length T. A value with a static row count (a
// pooled row, Linformer's k rows) takes W * rows units, enough for any T >= 1.
//
// A call whose kernel may write over one of its inputs (KernelOp::
// mayOverwriteInput: elementwise kernels, norms, a GEMM's residual) and whose
// input dies at that call takes the input's place. Otherwise the result goes
// first fit among the values still live; the call's own inputs count as live,
// so that no other output aliases an input.
//
// A tmk.split's parts take no space: they are views of the split buffer,
// which stays live until the last use of any part, and never a call's
// in-place target (only whole buffers are).
//
//===----------------------------------------------------------------------===//

#include "dialects/tm/TMOps.h"
#include "dialects/tmk/Passes.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>

namespace tmc::tmk {
#define GEN_PASS_DEF_TMKPLANBUFFERS
#include "dialects/tmk/Passes.h.inc"
} // namespace tmc::tmk

using namespace mlir;
using namespace tmc;

namespace {

struct Placement {
  llvm::DenseMap<Value, int64_t> offset;
  llvm::DenseSet<Operation *> inPlace;
  int64_t width = 0;
};

class Planner {
public:
  explicit Planner(func::FuncOp func) {
    Block &body = func.getBody().front();
    for (auto [index, op] : llvm::enumerate(body))
      order[&op] = index;
    Operation *terminator = body.getTerminator();
    for (Operation &op : body) {
      auto call = dyn_cast<tmk::CallOp>(op);
      // The returned value is the output buffer, not arena space.
      if (!call || llvm::is_contained(terminator->getOperands(), call.getResult()))
        continue;
      Value value = call.getResult();
      auto type = cast<ShapedType>(value.getType());
      int64_t rows = type.getDimSize(0);
      units[value] = type.getDimSize(1) * (ShapedType::isDynamic(rows) ? 1 : rows);
      size_t last = order[&op];
      for (Operation *user : value.getUsers()) {
        last = std::max(last, order.lookup(user));
        // A split's parts are views of this buffer: it lives as long as they do.
        if (isa<tmk::SplitOp>(user))
          for (Operation *partUser : user->getUsers())
            last = std::max(last, order.lookup(partUser));
      }
      lastUse[value] = last;
    }
    this->body = &body;
  }

  /// Places every arena value; with `reuse`, in place where legal.
  Placement place(bool reuse) {
    struct Live {
      int64_t begin, end;
      size_t lastUse;
    };
    std::vector<Live> live;
    Placement out;
    for (Operation &op : *body) {
      size_t index = order[&op];
      // Values whose last use was an earlier op are dead; this op's inputs
      // stay live so that the output never aliases them by accident.
      llvm::erase_if(live, [&](const Live &l) { return l.lastUse < index; });
      auto call = dyn_cast<tmk::CallOp>(op);
      if (!call || !units.count(call.getResult()))
        continue;
      Value value = call.getResult();
      int64_t size = units[value];
      if (reuse)
        if (std::optional<Value> victim = dyingInput(call, index)) {
          int64_t offset = out.offset[*victim];
          for (Live &l : live)
            if (l.begin == offset)
              l.lastUse = lastUse[value];
          out.offset[value] = offset;
          out.inPlace.insert(call);
          continue;
        }
      std::sort(live.begin(), live.end(),
                [](const Live &a, const Live &b) { return a.begin < b.begin; });
      int64_t offset = 0;
      for (const Live &l : live) {
        if (offset + size <= l.begin)
          break;
        offset = std::max(offset, l.end);
      }
      out.offset[value] = offset;
      live.push_back({offset, offset + size, lastUse[value]});
      out.width = std::max(out.width, offset + size);
    }
    return out;
  }

private:
  /// An arena input of `call` that dies there, has the result's size and row
  /// count, and that the kernel may overwrite as it writes its result.
  std::optional<Value> dyingInput(tmk::CallOp call, size_t index) {
    tmk::KernelOp kernel = call.getKernelOp();
    Value result = call.getResult();
    if (!kernel || !ShapedType::isDynamic(cast<ShapedType>(result.getType()).getDimSize(0)))
      return std::nullopt;
    for (auto [i, arg] : llvm::enumerate(call.getArgs())) {
      if (!units.count(arg) || lastUse[arg] != index || units[arg] != units[result] ||
          !ShapedType::isDynamic(cast<ShapedType>(arg.getType()).getDimSize(0)) ||
          !kernel.mayOverwriteInput(i))
        continue;
      // Every other operand that reads the same buffer must be overwritable
      // too (a GEMM reading x as input and residual reads it row-wide).
      // (A copy: clang before 16 cannot capture a structured binding.)
      Value input = arg;
      bool safe = llvm::all_of(llvm::enumerate(call.getArgs()), [&](auto other) {
        return other.value() != input || kernel.mayOverwriteInput(other.index());
      });
      if (safe)
        return arg;
    }
    return std::nullopt;
  }

  Block *body = nullptr;
  llvm::DenseMap<Operation *, size_t> order;
  llvm::DenseMap<Value, int64_t> units;
  llvm::DenseMap<Value, size_t> lastUse;
};

struct PlanBuffers : tmc::tmk::impl::TMKPlanBuffersBase<PlanBuffers> {
  using TMKPlanBuffersBase::TMKPlanBuffersBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Planner planner(func);
    Placement separate = planner.place(/*reuse=*/false);
    Placement plan = planner.place(/*reuse=*/true);
    Builder b(func.getContext());
    func.walk([&](tmk::CallOp call) {
      auto it = plan.offset.find(call.getResult());
      if (it == plan.offset.end()) {
        call.removeArenaAttr();
      } else {
        call.setArenaAttr(b.getI64IntegerAttr(it->second));
      }
      call.setInPlace(plan.inPlace.contains(call));
    });
    func->setAttr("tmk.arena_width", b.getI64IntegerAttr(plan.width));
    func->setAttr("tmk.arena_width_no_reuse", b.getI64IntegerAttr(separate.width));
    if (explain)
      emitRemark(func.getLoc()) << "@" << func.getSymName() << ": arena of " << plan.width
                                << " x T floats with " << plan.inPlace.size()
                                << " results in place (" << separate.width
                                << " x T floats without)";
  }
};

} // namespace
