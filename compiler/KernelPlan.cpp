//===- KernelPlan.cpp - From fused tm ops to kernel calls -----------------===//

#include "compiler/KernelPlan.h"

#include "dialects/tm/TMOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <map>

using namespace mlir;

namespace tmc {

namespace {

int64_t width(Value value) {
  return cast<ShapedType>(value.getType()).getDimSize(1);
}

KernelDesc describe(Operation *op) {
  KernelDesc desc{};
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](tm::EmbedOp embed) {
        desc.kind = KernelKind::Embed;
        desc.width = width(embed.getResult());
        desc.tableRows = cast<ShapedType>(embed.getTable().getType()).getDimSize(0);
        desc.scale = embed.getScale().convertToDouble();
        desc.position = embed.getPosition().str();
        if (embed.getPositions())
          desc.positionRows = cast<ShapedType>(embed.getPositions().getType()).getDimSize(0);
      })
      .Case([&](tm::AddPositionsOp positions) {
        desc.kind = KernelKind::AddPositions;
        desc.width = width(positions.getResult());
        desc.position = positions.getKind().str();
        if (positions.getTable())
          desc.positionRows = cast<ShapedType>(positions.getTable().getType()).getDimSize(0);
      })
      .Case([&](tm::AddSegmentsOp segments) {
        desc.kind = KernelKind::AddSegments;
        desc.width = width(segments.getResult());
        desc.positionRows = cast<ShapedType>(segments.getTable().getType()).getDimSize(0);
      })
      .Case([&](tm::LinearOp linear) {
        desc.kind = KernelKind::Linear;
        desc.width = width(linear.getResult());
        desc.inWidth = width(linear.getInput());
        desc.hasBias = static_cast<bool>(linear.getBias());
        desc.hasResidual = static_cast<bool>(linear.getResidual());
        desc.activation = linear.getActivation().str();
      })
      .Case([&](tm::AttentionOp attention) {
        desc.kind = KernelKind::Attention;
        desc.width = width(attention.getResult());
        desc.heads = attention.getHeads();
        desc.kvHeads = attention.getKvHeads();
        desc.headDim = attention.getHeadDim();
        desc.scale = attention.getScale().convertToDouble();
        tm::MaskAttr mask = attention.getMask();
        desc.mask.causal = mask.getCausal();
        desc.mask.padding = mask.getPadding();
        desc.mask.decoder = mask.getDecoder();
        desc.mask.window = mask.getWindow();
        desc.mask.dilated = mask.getDilated();
        desc.mask.dilation = mask.getDilation();
        desc.mask.globals.assign(mask.getGlobals().begin(), mask.getGlobals().end());
        desc.mask.randomPerRow = mask.getRandomPerRow();
        desc.mask.randomSeed = mask.getRandomSeed();
        desc.mask.maxSeq = mask.getMaxSeq();
        desc.mask.alibi = attention.getAlibi();
        desc.hasLength = static_cast<bool>(attention.getLength());
      })
      .Case([&](tm::AddOp add) {
        desc.kind = KernelKind::Add;
        desc.width = width(add.getResult());
      })
      .Case([&](tm::ActivationOp activation) {
        desc.kind = KernelKind::Activation;
        desc.width = width(activation.getResult());
        desc.activation = activation.getKind().str();
      })
      .Case([&](tm::GatedActivationOp gated) {
        desc.kind = KernelKind::GatedActivation;
        desc.width = width(gated.getResult());
        desc.activation = gated.getKind().str();
      })
      .Case([&](tm::NormOp norm) {
        desc.kind = KernelKind::Norm;
        desc.width = width(norm.getResult());
        desc.eps = norm.getEps().convertToDouble();
        desc.variant = norm.getKind().str();
        desc.hasBias = static_cast<bool>(norm.getBias());
      })
      .Case([&](tm::AddNormOp norm) {
        desc.kind = KernelKind::AddNorm;
        desc.width = width(norm.getResult());
        desc.eps = norm.getEps().convertToDouble();
        desc.variant = norm.getKind().str();
        desc.hasBias = static_cast<bool>(norm.getBias());
      })
      .Case([&](tm::RopeOp rope) {
        desc.kind = KernelKind::Rope;
        desc.width = width(rope.getResult());
        desc.heads = rope.getHeads();
        desc.headDim = rope.getHeadDim();
        desc.theta = rope.getTheta().convertToDouble();
      })
      .Case([&](tm::SeqProjectOp project) {
        desc.kind = KernelKind::SeqProject;
        desc.width = width(project.getResult());
        auto e = cast<ShapedType>(project.getProjection().getType());
        desc.tableRows = e.getDimSize(0);    // k
        desc.positionRows = e.getDimSize(1); // max_seq
        desc.hasLength = static_cast<bool>(project.getLength());
      })
      .Case([&](tm::PoolOp pool) {
        desc.kind = KernelKind::Pool;
        desc.width = width(pool.getResult());
        desc.variant = pool.getKind().str();
      });
  return desc;
}

/// The name of the value an op produces: a fused op's value is the last
/// fused op's (add + norm yields the norm), so the last NameLoc in it.
std::string valueName(Location loc) {
  std::string name;
  loc->walk([&](Location inner) {
    if (auto named = dyn_cast<NameLoc>(inner))
      name = named.getName().str();
    return WalkResult::advance();
  });
  return name;
}

/// Location as "name @ file:line:col" for the kernel listing and error
/// messages from the executable; a fused op's is its last part's.
std::string describeLocation(Location loc) {
  std::string name = valueName(loc), file;
  loc->walk([&](Location inner) {
    if (auto fileLoc = dyn_cast<FileLineColLoc>(inner))
      file = llvm::formatv("{0}:{1}:{2}", fileLoc.getFilename().getValue(),
                           fileLoc.getLine(), fileLoc.getColumn());
    return WalkResult::advance();
  });
  if (file.empty())
    return name;
  return name.empty() ? file : name + " @ " + file;
}

/// Places values with disjoint live ranges at overlapping arena offsets
/// (first fit over [definition, last use] intervals). Sizes and offsets are in
/// units of T floats, so the static plan holds for every sequence length.
/// Arena slots enter with the defining call's index and leave with an offset.
int64_t assignArenaOffsets(std::vector<KernelCall> &calls,
                           const std::vector<size_t> &lastUse) {
  struct Live { int64_t begin, end; size_t lastUse; };
  std::vector<Live> live;
  std::vector<int64_t> offsetOfCall(calls.size(), 0);
  int64_t arenaWidth = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    // Free the values whose last use was an earlier call; values read by this
    // call stay live so that the output never aliases an input.
    llvm::erase_if(live, [&](const Live &l) { return l.lastUse < i; });
    const Slot &out = calls[i].args.back().slot;
    if (out.kind != Slot::Kind::Arena)
      continue;
    std::sort(live.begin(), live.end(),
              [](const Live &a, const Live &b) { return a.begin < b.begin; });
    int64_t offset = 0;
    for (const Live &l : live) {
      if (offset + out.width <= l.begin)
        break;
      offset = std::max(offset, l.end);
    }
    offsetOfCall[i] = offset;
    live.push_back({offset, offset + out.width, lastUse[i]});
    arenaWidth = std::max(arenaWidth, offset + out.width);
  }
  for (KernelCall &call : calls)
    for (CallArg &arg : call.args)
      if (arg.slot.kind == Slot::Kind::Arena)
        arg.slot.index = offsetOfCall[arg.slot.index];
  return arenaWidth;
}

/// Forms the calls of one function (@encode or @forward) into the plan.
class FunctionPlanner {
public:
  FunctionPlanner(KernelPlan &plan, std::map<std::string, size_t> &kernelByName,
                  const std::map<std::string, int64_t> &weightIndex, bool explain)
      : out(plan), kernelByName(kernelByName), weightIndex(weightIndex), explain(explain) {}

  /// Appends `func`'s calls with `phase`; `result` (may be null) is the value
  /// the executable returns. Returns the arena width the function needs.
  FailureOr<int64_t> planFunction(func::FuncOp func, KernelCall::Phase phase, Value result) {
    // MLIRGen names each argument with the run input it stands for.
    static const std::pair<const char *, Slot::Kind> kInputs[] = {
        {"tokens", Slot::Kind::Tokens},
        {"offset", Slot::Kind::Offset},
        {"length", Slot::Kind::Length},
        {"source_length", Slot::Kind::SourceLength},
        {"segments", Slot::Kind::Segments}};
    for (BlockArgument arg : func.getArguments()) {
      auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "tm.input");
      const auto *input = name ? llvm::find_if(kInputs, [&](const auto &entry) {
        return name.getValue() == entry.first;
      }) : std::end(kInputs);
      if (input == std::end(kInputs))
        return func.emitOpError("argument ") << arg.getArgNumber()
                                             << " is not a run input (tm.input)", failure();
      slots[arg] = {input->second, 0, 0};
    }
    firstCall = out.calls.size();

    for (Operation &op : func.getBody().front().without_terminator()) {
      if (auto weight = dyn_cast<tm::WeightOp>(op)) {
        auto it = weightIndex.find(weight.getName().str());
        if (it == weightIndex.end())
          return weight.emitOpError("names tensor '")
                     << weight.getName() << "', which is not in the model's manifest",
                 failure();
        slots[weight.getResult()] = {Slot::Kind::Weight, it->second, 0};
        continue;
      }
      if (auto read = dyn_cast<tm::CacheReadOp>(op)) {
        auto it = cacheByName.find(read.getName().str());
        if (it == cacheByName.end())
          return read.emitOpError("reads cache '") << read.getName()
                                                   << "', which nothing writes", failure();
        slots[read.getResult()] = {Slot::Kind::Cache, static_cast<int64_t>(it->second),
                                   width(read.getResult())};
        rowCount[read.getResult()] = BufferShape::kSource;
        continue;
      }
      if (failed(planOp(op, phase, result)))
        return failure();
    }
    std::vector<KernelCall> calls(out.calls.begin() + firstCall, out.calls.end());
    int64_t arenaWidth = assignArenaOffsets(calls, lastUse);
    std::copy(calls.begin(), calls.end(), out.calls.begin() + firstCall);
    return arenaWidth;
  }

  /// Caches are shared between functions: @encode writes what @forward reads.
  std::map<std::string, size_t> cacheByName;

private:
  int64_t rowsOf(Value v) {
    if (auto it = rowCount.find(v); it != rowCount.end())
      return it->second;
    int64_t rows = cast<ShapedType>(v.getType()).getDimSize(0);
    return ShapedType::isDynamic(rows) ? BufferShape::kTokens : rows;
  }

  /// Call indices are local to this function until offsets are assigned.
  Slot use(Value operand, size_t callIndex) {
    Slot slot = slots.lookup(operand);
    if (slot.kind == Slot::Kind::Arena)
      lastUse[slot.index] = callIndex;
    return slot;
  }

  LogicalResult planOp(Operation &op, KernelCall::Phase phase, Value result) {
    size_t callIndex = out.calls.size() - firstCall;
    if (auto append = dyn_cast<tm::CacheAppendOp>(op)) {
      CacheDesc cache{append.getName().str(), width(append.getResult()), append.getCapacity(),
                      out.cacheFloats};
      out.cacheFloats += cache.width * cache.capacity;
      Slot cacheSlot{Slot::Kind::Cache, static_cast<int64_t>(out.caches.size()), cache.width};
      cacheByName[cache.name] = out.caches.size();
      out.caches.push_back(cache);
      KernelCall call;
      call.kind = KernelCall::Kind::CacheAppend;
      call.phase = phase;
      call.opName = op.getName().getStringRef().str();
      call.location = describeLocation(op.getLoc());
      call.origin = valueName(op.getLoc());
      call.args.push_back({use(append.getInput(), callIndex),
                           {false, false, {cache.width, BufferShape::kTokens}}});
      call.args.push_back({cacheSlot, {false, false, {cache.width, BufferShape::kKeys}}});
      out.calls.push_back(std::move(call));
      lastUse.push_back(callIndex);
      slots[append.getResult()] = cacheSlot;
      rowCount[append.getResult()] = BufferShape::kKeys;
      return success();
    }
    if (!isa<tm::TMDialect>(op.getDialect()) || op.getNumResults() != 1)
      return op.emitOpError("cannot be mapped to a kernel");

    KernelDesc desc = describe(&op);
    auto [it, inserted] = kernelByName.try_emplace(desc.name(), out.kernels.size());
    if (inserted)
      out.kernels.push_back(desc);
    if (explain)
      emitRemark(op.getLoc()) << tm::originPrefix(op.getLoc()) << op.getName()
                              << " runs as kernel k" << it->second << " ("
                              << desc.name() << (inserted ? ", new" : ", shared") << ")";
    std::vector<BufferShape> signature = kernelSignature(desc);

    KernelCall call{KernelCall::Kind::Kernel, phase, it->second, {},
                    op.getName().getStringRef().str(), describeLocation(op.getLoc()),
                    valueName(op.getLoc())};
    // Bind each parameter's symbolic row extent to what this call's value has.
    auto bind = [&](BufferShape shape, Value value) {
      if (!shape.isScalar && !shape.extents.empty() &&
          shape.extents.back() == BufferShape::kTokens && isa<ShapedType>(value.getType()) &&
          cast<ShapedType>(value.getType()).getRank() == 2)
        shape.extents.back() = rowsOf(value);
      return shape;
    };
    for (auto [index, operand] : llvm::enumerate(op.getOperands()))
      call.args.push_back({use(operand, callIndex), bind(signature[index], operand)});
    Value value = op.getResult(0);
    // Arena space is counted in units of T floats; a value with a static row
    // count (a pooled row, Linformer's k rows) may exceed T rows, so it
    // reserves width * rows units, enough for every T >= 1.
    int64_t staticRows = rowsOf(value) > 0 ? rowsOf(value) : 1;
    Slot outSlot{value == result ? Slot::Kind::Output : Slot::Kind::Arena,
                 static_cast<int64_t>(callIndex), width(value) * staticRows};
    slots[value] = outSlot;
    call.args.push_back({outSlot, bind(signature.back(), value)});
    if (call.args.size() != signature.size())
      return op.emitOpError("does not match its kernel's signature");
    out.calls.push_back(std::move(call));
    lastUse.push_back(callIndex);
    return success();
  }

  KernelPlan &out;
  std::map<std::string, size_t> &kernelByName;
  const std::map<std::string, int64_t> &weightIndex;
  bool explain;
  llvm::DenseMap<Value, Slot> slots;
  llvm::DenseMap<Value, int64_t> rowCount; // BufferShape row code per value
  std::vector<size_t> lastUse; // per call: the last call that reads its result
  size_t firstCall = 0;
};

} // namespace

FailureOr<KernelPlan> formKernels(ModuleOp module, const std::vector<std::string> &manifest,
                                  bool explain) {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return module.emitError("no func.func @forward to compile"), failure();
  std::map<std::string, int64_t> weightIndex;
  for (size_t i = 0; i < manifest.size(); ++i)
    weightIndex[manifest[i]] = static_cast<int64_t>(i);

  KernelPlan plan;
  std::map<std::string, size_t> kernelByName;
  std::map<std::string, size_t> caches;
  if (auto encode = module.lookupSymbol<func::FuncOp>("encode")) {
    FunctionPlanner planner(plan, kernelByName, weightIndex, explain);
    FailureOr<int64_t> width = planner.planFunction(encode, KernelCall::Phase::Encode, Value());
    if (failed(width))
      return failure();
    plan.encodeArenaWidth = *width;
    plan.hasEncode = true;
    caches = planner.cacheByName;
  }
  auto returnOp = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
  Value result = returnOp.getOperand(0);
  plan.outputWidth = width(result);
  int64_t resultRows = cast<ShapedType>(result.getType()).getDimSize(0);
  plan.outputRows = ShapedType::isDynamic(resultRows) ? 0 : resultRows;

  FunctionPlanner planner(plan, kernelByName, weightIndex, explain);
  planner.cacheByName = caches;
  FailureOr<int64_t> width = planner.planFunction(forward, KernelCall::Phase::Step, result);
  if (failed(width))
    return failure();
  plan.arenaWidth = *width;
  bool computed = llvm::any_of(plan.calls, [](const KernelCall &call) {
    return call.args.back().slot.kind == Slot::Kind::Output;
  });
  if (!computed)
    return forward.emitError("the model's result is not computed by a kernel"), failure();
  return plan;
}

namespace {
void printShape(const BufferShape &b, llvm::raw_ostream &os) {
  if (b.isScalar) {
    os << "i32";
    return;
  }
  os << (b.isInt32 ? "i32[" : "f32[");
  llvm::interleave(
      b.extents, os,
      [&](int64_t e) {
        os << (e == BufferShape::kTokens   ? "T"
               : e == BufferShape::kKeys   ? "P+T"
               : e == BufferShape::kSource ? "S"
                                           : std::to_string(e));
      },
      "x");
  os << "]";
}
} // namespace

void printKernelPlan(const KernelPlan &plan, llvm::raw_ostream &os) {
  os << "// " << plan.kernels.size() << " kernels, " << plan.calls.size()
     << " calls, arena " << plan.arenaWidth << " x T floats, output " << plan.outputWidth
     << " x " << (plan.outputRows ? std::to_string(plan.outputRows) : "T") << " floats";
  if (!plan.caches.empty())
    os << ", " << plan.caches.size() << " caches of " << plan.cacheFloats << " floats";
  os << "\n\nkernels:\n";
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    os << "  k" << i << " " << plan.kernels[i].name() << " (";
    llvm::interleaveComma(kernelSignature(plan.kernels[i]), os,
                          [&](const BufferShape &b) { printShape(b, os); });
    os << ")\n";
  }
  os << "\ncalls:\n";
  for (const KernelCall &call : plan.calls) {
    os << "  " << (call.phase == KernelCall::Phase::Encode ? "encode: " : "")
       << (call.kind == KernelCall::Kind::CacheAppend ? std::string("append")
                                                               : "k" + std::to_string(call.kernel))
       << "(";
    llvm::interleaveComma(call.args, os, [&](const CallArg &arg) {
      const Slot &s = arg.slot;
      switch (s.kind) {
      case Slot::Kind::Tokens: os << "tokens"; break;
      case Slot::Kind::Offset: os << "offset"; break;
      case Slot::Kind::Segments: os << "segments"; break;
      case Slot::Kind::Length: os << "length"; break;
      case Slot::Kind::SourceLength: os << "source_length"; break;
      case Slot::Kind::Weight: os << "w" << s.index; break;
      case Slot::Kind::Arena: os << "arena+" << s.index << "T"; break;
      case Slot::Kind::Output: os << "output"; break;
      case Slot::Kind::Cache: os << "cache" << s.index; break;
      }
    });
    os << ")  // " << call.opName << " " << call.location << "\n";
  }
}

} // namespace tmc
