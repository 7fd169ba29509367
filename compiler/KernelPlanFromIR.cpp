//===- KernelPlanFromIR.cpp - The kernel plan, read from the tmk module ---===//
//
// The tmk passes (dialects/tmk) form the kernels, share them, mark decode
// variants and place every value in the arena; this file reads their result
// into the plain-data KernelPlan that Halide lowering and the executor
// generator consume, resolving weight names to manifest indices and caches to
// offsets in the model's cache memory.
//
//===----------------------------------------------------------------------===//

#include "compiler/KernelPlanFromIR.h"

#include "dialects/tm/TMOps.h"
#include "dialects/tmk/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
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

/// Where each cache starts in the cache memory: a multiple of this many bytes.
constexpr int64_t kCacheAlignment = 64;

KernelDesc describe(tmk::KernelOp kernel) {
  KernelDesc desc{};
  desc.kind = kernel.getKind();
  desc.width = kernel.getWidth();
  desc.inWidth = kernel.getInWidth().value_or(0);
  desc.tableRows = kernel.getTableRows().value_or(0);
  desc.positionRows = kernel.getPositionRows().value_or(0);
  desc.heads = kernel.getHeads().value_or(0);
  desc.kvHeads = kernel.getKvHeads().value_or(0);
  desc.headDim = kernel.getHeadDim().value_or(0);
  desc.scale = kernel.getScale() ? kernel.getScale()->convertToDouble() : 1.0;
  desc.eps = kernel.getEps() ? kernel.getEps()->convertToDouble() : 0.0;
  desc.theta = kernel.getTheta() ? kernel.getTheta()->convertToDouble() : 0.0;
  desc.position = kernel.getPosition().value_or("").str();
  desc.activation = kernel.getActivation().value_or("").str();
  desc.precision = kernel.getPrecision().value_or("f32").str();
  desc.kvPrecision = kernel.getKvPrecision().value_or("f32").str();
  desc.windowKeys = kernel.getWindowKeys();
  desc.variant = kernel.getVariant().value_or("").str();
  desc.hasBias = kernel.getBias();
  desc.hasResidual = kernel.getResidual();
  desc.ropeColumns = kernel.getRopeColumns().value_or(0);
  desc.hasLength = kernel.getLength();
  desc.decodeVariant = kernel.getDecode();
  if (std::optional<tm::MaskAttr> mask = kernel.getMask()) {
    desc.mask.causal = mask->getCausal();
    desc.mask.padding = mask->getPadding();
    desc.mask.decoder = mask->getDecoder();
    desc.mask.window = mask->getWindow().value_or(0);
    desc.mask.dilated = mask->getDilated().value_or(0);
    desc.mask.dilation = mask->getDilation();
    desc.mask.globals.assign(mask->getGlobals().begin(), mask->getGlobals().end());
    desc.mask.randomPerRow = mask->getRandomPerRow().value_or(0);
    desc.mask.randomSeed = mask->getRandomSeed();
    desc.mask.maxSeq = mask->getMaxSeq();
    desc.hasLength = mask->getPadding();
  }
  desc.mask.alibi = kernel.getAlibi();
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

/// The values a fused op computes but does not yield: every name in its
/// location other than the last (valueName).
std::vector<std::string> foldedValueNames(Location loc) {
  std::vector<std::string> names;
  loc->walk([&](Location inner) {
    if (auto named = dyn_cast<NameLoc>(inner))
      names.push_back(named.getName().str());
    return WalkResult::advance();
  });
  if (names.empty())
    return names;
  std::string yielded = names.back();
  names.pop_back();
  std::erase(names, yielded);
  return names;
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

/// The manifest and its tensors' indices by name: every weight op looks its
/// tensor up, and scanning the manifest for each made planning quadratic in
/// the layers (a 4096-layer model has about 50000 tensors).
struct ManifestLookup {
  explicit ManifestLookup(const std::vector<TensorSpec> &manifest) : manifest(manifest) {
    for (size_t i = 0; i < manifest.size(); ++i)
      indexByName.try_emplace(manifest[i].name, static_cast<int64_t>(i));
  }
  const std::vector<TensorSpec> &manifest;
  llvm::StringMap<int64_t> indexByName;
};

/// The manifest index of the tensor a weight op names, after checking that
/// the op's type is the manifest's shape: the executable binds the file's
/// tensor of that name, and reading it with another shape (an edited
/// `ffn.down.weight : tensor<128x64xf32>` where the spec makes [64, 128])
/// would run with wrong output, or past its end.
FailureOr<int64_t> manifestIndex(Operation *op, StringRef name, ShapedType type,
                                 const ManifestLookup &lookup) {
  auto it = lookup.indexByName.find(name);
  if (it == lookup.indexByName.end())
    return op->emitOpError("names tensor '") << name << "', which is not in the model's manifest",
           failure();
  const TensorSpec &tensor = lookup.manifest[it->second];
  if (type.hasStaticShape() && llvm::ArrayRef<int64_t>(tensor.shape) == type.getShape())
    return it->second;
  auto diag = op->emitOpError("has type ") << type << ", but the spec's manifest makes '" << name
                                           << "' [";
  llvm::interleaveComma(tensor.shape, diag);
  diag << "]";
  return failure();
}

/// Reads the calls of one function (@encode or @forward) into the plan.
class FunctionPlanner {
public:
  FunctionPlanner(KernelPlan &plan, std::map<std::string, size_t> &kernelByName,
                  const ManifestLookup &manifest, bool explain)
      : out(plan), kernelByName(kernelByName), manifest(manifest), explain(explain) {
    // @forward's planner reuses what @encode's stacked.
    for (size_t i = 0; i < out.joined.size(); ++i)
      joinedIndex.try_emplace({out.joined[i].parts, out.joined[i].shape}, i);
  }

  /// Appends `func`'s calls with `phase`; `result` (may be null) is the value
  /// the executable returns. Returns the arena width tmk-plan-buffers gave it.
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
    auto arenaWidth = func->getAttrOfType<IntegerAttr>("tmk.arena_width");
    if (!arenaWidth)
      return func.emitOpError("has no tmk.arena_width: run tmk-plan-buffers first"), failure();

    for (Operation &op : func.getBody().front().without_terminator()) {
      if (auto weight = dyn_cast<tmk::WeightOp>(op)) {
        FailureOr<int64_t> index = manifestIndex(weight, weight.getName(),
                                                 weight.getResult().getType(), manifest);
        if (failed(index))
          return failure();
        slots[weight.getResult()] = {Slot::Kind::Weight, *index, 0};
        continue;
      }
      if (auto concat = dyn_cast<tmk::ConcatOp>(op)) {
        if (failed(planConcat(concat)))
          return failure();
        continue;
      }
      if (auto split = dyn_cast<tmk::SplitOp>(op)) {
        if (failed(planSplit(split)))
          return failure();
        continue;
      }
      if (auto read = dyn_cast<tmk::CacheReadOp>(op)) {
        auto it = cacheByName.find(read.getName().str());
        if (it == cacheByName.end())
          return read.emitOpError("reads cache '") << read.getName()
                                                   << "', which nothing writes", failure();
        const CacheDesc &cache = out.caches[it->second];
        if (read.getPrecision().value_or("f32") != cache.precision)
          return read.emitOpError("reads cache '")
                     << read.getName() << "' as " << read.getPrecision().value_or("f32")
                     << "; it is written as " << cache.precision,
                 failure();
        slots[read.getResult()] = {Slot::Kind::Cache, static_cast<int64_t>(it->second),
                                   width(read.getResult())};
        rowCount[read.getResult()] = BufferShape::kSource;
        continue;
      }
      if (auto append = dyn_cast<tmk::CacheAppendOp>(op)) {
        planAppend(append, phase);
        continue;
      }
      auto call = dyn_cast<tmk::CallOp>(op);
      if (!call)
        return op.emitOpError("cannot be mapped to a kernel call (run tm-lower-to-kernels)"),
               failure();
      if (failed(planCall(call, phase, result)))
        return failure();
    }
    return arenaWidth.getInt();
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

  /// A stacked weight: manifest tensors the executable joins at load time.
  LogicalResult planConcat(tmk::ConcatOp concat) {
    JoinedWeight joined;
    joined.shape.assign(concat.getType().getShape().begin(), concat.getType().getShape().end());
    for (Value input : concat.getInputs()) {
      Slot slot = slots.lookup(input);
      if (slot.kind != Slot::Kind::Weight || !slots.count(input))
        return concat.emitOpError("stacks a value that is not a weight of the manifest");
      joined.parts.push_back(slot.index);
    }
    auto [same, inserted] = joinedIndex.try_emplace({joined.parts, joined.shape}, out.joined.size());
    if (inserted)
      out.joined.push_back(joined);
    slots[concat.getResult()] = {Slot::Kind::Joined, static_cast<int64_t>(same->second), 0};
    return success();
  }

  /// Each part is a view of the split call's buffer, and a value of its own
  /// to the call that wrote it (verify compares it by that name).
  LogicalResult planSplit(tmk::SplitOp split) {
    auto producer = callOf.find(split.getInput());
    if (producer == callOf.end() || !slots.count(split.getInput()) ||
        slots.lookup(split.getInput()).kind != Slot::Kind::Arena)
      return split.emitOpError("splits a value that is not a kernel's result in the arena");
    Slot whole = slots.lookup(split.getInput());
    auto fused = dyn_cast<FusedLoc>(split.getLoc());
    bool named = fused && fused.getLocations().size() == split.getNumResults();
    int64_t column = 0;
    for (auto [index, part] : llvm::enumerate(split.getResults())) {
      Slot slot = whole;
      slot.width = width(part);
      slot.column = whole.column + column;
      // The buffer's own rows (a value with static rows has a slot width of
      // rows x width).
      slot.rowStride = whole.rowStride ? whole.rowStride : width(split.getInput());
      slots[part] = slot;
      std::string origin = named ? valueName(fused.getLocations()[index]) : "";
      out.calls[producer->second].parts.push_back({origin, column, slot.width});
      column += slot.width;
    }
    return success();
  }

  void planAppend(tmk::CacheAppendOp append, KernelCall::Phase phase) {
    CacheDesc cache{append.getName().str(),
                    width(append.getResult()),
                    static_cast<int64_t>(append.getCapacity()), // <= kMaxExtent (verifier)
                    out.cacheBytes,
                    append.getPrecision().value_or("f32").str(),
                    append.getKeep() ? static_cast<int64_t>(*append.getKeep()) : -1};
    // Every cache starts at a whole vector, whatever the 16-bit ones before it hold.
    out.cacheBytes += (cache.bytes() + kCacheAlignment - 1) / kCacheAlignment * kCacheAlignment;
    Slot cacheSlot{Slot::Kind::Cache, static_cast<int64_t>(out.caches.size()), cache.width};
    cacheByName[cache.name] = out.caches.size();
    out.caches.push_back(cache);
    KernelCall call;
    call.kind = KernelCall::Kind::CacheAppend;
    call.phase = phase;
    call.opName = "tm.cache_append";
    call.location = describeLocation(append.getLoc());
    call.origin = valueName(append.getLoc());
    call.args.push_back({slots.lookup(append.getInput()),
                         {false, false, {cache.width, BufferShape::kTokens}}});
    call.args.push_back({cacheSlot, {false, false, {cache.width, BufferShape::kKeys}}});
    out.calls.push_back(std::move(call));
    slots[append.getResult()] = cacheSlot;
    rowCount[append.getResult()] = BufferShape::kKeys;
  }

  LogicalResult planCall(tmk::CallOp op, KernelCall::Phase phase, Value result) {
    tmk::KernelOp kernel = op.getKernelOp();
    if (!kernel)
      return op.emitOpError("calls no tmk.kernel");
    KernelDesc desc = describe(kernel);
    auto [it, inserted] = kernelByName.try_emplace(desc.name(), out.kernels.size());
    if (inserted)
      out.kernels.push_back(desc);
    else
      out.kernels[it->second].decodeVariant |= desc.decodeVariant;
    if (explain)
      emitRemark(op.getLoc()) << tm::originPrefix(op.getLoc()) << op.getFrom()
                              << " runs as kernel k" << it->second << " ("
                              << desc.name() << (inserted ? ", new" : ", shared") << ")";
    std::vector<BufferShape> signature = kernelSignature(desc);

    KernelCall call{KernelCall::Kind::Kernel, phase, it->second, {}, op.getFrom().str(),
                    describeLocation(op.getLoc()), valueName(op.getLoc())};
    call.foldedValues = foldedValueNames(op.getLoc());
    // Bind each parameter's symbolic row extent to what this call's value has.
    auto bind = [&](BufferShape shape, Value value) {
      if (!shape.isScalar && !shape.extents.empty() &&
          shape.extents.back() == BufferShape::kTokens && isa<ShapedType>(value.getType()) &&
          cast<ShapedType>(value.getType()).getRank() == 2)
        shape.extents.back() = rowsOf(value);
      return shape;
    };
    if (op.getArgs().size() + 1 != signature.size())
      return op.emitOpError("does not match its kernel's signature");
    for (auto [index, operand] : llvm::enumerate(op.getArgs()))
      call.args.push_back({slots.lookup(operand), bind(signature[index], operand)});
    Value value = op.getResult();
    // Arena space is counted in units of T floats; a value with a static row
    // count reserves width * rows units (tmk-plan-buffers).
    int64_t staticRows = rowsOf(value) > 0 ? rowsOf(value) : 1;
    Slot outSlot{Slot::Kind::Output, 0, width(value) * staticRows};
    if (value != result) {
      if (!op.getArena())
        return op.emitOpError("has no arena offset: run tmk-plan-buffers first");
      outSlot.kind = Slot::Kind::Arena;
      outSlot.index = *op.getArena();
    }
    slots[value] = outSlot;
    callOf[value] = out.calls.size();
    call.args.push_back({outSlot, bind(signature.back(), value)});
    out.calls.push_back(std::move(call));
    return success();
  }

  KernelPlan &out;
  std::map<std::string, size_t> &kernelByName;
  const ManifestLookup &manifest;
  bool explain;
  /// out.joined's indices by (parts, shape): a map, not a scan of out.joined
  /// per concat, which was quadratic in the layers.
  std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>, size_t> joinedIndex;
  llvm::DenseMap<Value, Slot> slots;
  llvm::DenseMap<Value, int64_t> rowCount; // BufferShape row code per value
  llvm::DenseMap<Value, size_t> callOf;    // the call (index in out.calls) that wrote a value
};

} // namespace

LogicalResult verifyWeights(ModuleOp module, const std::vector<TensorSpec> &tensors) {
  ManifestLookup manifest(tensors);
  WalkResult walk = module.walk([&](Operation *op) {
    bool bad = false;
    if (auto weight = dyn_cast<tm::WeightOp>(op))
      bad = failed(manifestIndex(op, weight.getName(), weight.getResult().getType(), manifest));
    else if (auto weight = dyn_cast<tmk::WeightOp>(op))
      bad = failed(manifestIndex(op, weight.getName(), weight.getResult().getType(), manifest));
    return bad ? WalkResult::interrupt() : WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult verifyCacheCapacities(ModuleOp module, int64_t maxSeq) {
  // A cache bounded by its window (tmk-window-caches) holds fewer rows.
  if (failed(tmk::verifyWindowCaches(module)))
    return failure();
  WalkResult walk = module.walk([&](Operation *op) {
    if (!isa<tm::CacheAppendOp, tm::CacheReadOp, tmk::CacheAppendOp, tmk::CacheReadOp>(op))
      return WalkResult::advance();
    if (auto append = dyn_cast<tmk::CacheAppendOp>(op); append && append.getKeep())
      return WalkResult::advance();
    auto capacity = op->getAttrOfType<IntegerAttr>("capacity");
    if (capacity && capacity.getInt() == maxSeq)
      return WalkResult::advance();
    op->emitOpError("has capacity ")
        << (capacity ? capacity.getInt() : 0) << "; the spec's max_seq is " << maxSeq
        << ", the rows the executable may append";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

FailureOr<KernelPlan> formKernels(ModuleOp module, const std::vector<TensorSpec> &tensors,
                                  bool explain) {
  ManifestLookup manifest(tensors);
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return module.emitError("no func.func @forward to compile"), failure();

  KernelPlan plan;
  if (auto chunk = module->getAttrOfType<IntegerAttr>("tmk.run_chunk"))
    plan.runChunk = chunk.getInt();
  std::map<std::string, size_t> kernelByName;
  std::map<std::string, size_t> caches;
  if (auto encode = module.lookupSymbol<func::FuncOp>("encode")) {
    FunctionPlanner planner(plan, kernelByName, manifest, explain);
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

  FunctionPlanner planner(plan, kernelByName, manifest, explain);
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

} // namespace tmc
