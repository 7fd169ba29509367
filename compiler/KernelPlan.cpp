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

/// Exact (round-trip) text of a double, safe inside a C identifier, so that
/// kernels differing in any constant never share a name.
std::string formatDouble(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  std::string text = buffer;
  for (char &c : text)
    if (c == '.' || c == '-' || c == '+')
      c = c == '.' ? 'p' : (c == '-' ? 'm' : 'x');
  return text;
}

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
      .Case([&](tm::LinearOp linear) {
        desc.kind = KernelKind::Linear;
        desc.width = width(linear.getResult());
        desc.inWidth = width(linear.getInput());
        desc.hasBias = static_cast<bool>(linear.getBias());
        desc.activation = linear.getActivation().str();
      })
      .Case([&](tm::AttentionOp attention) {
        desc.kind = KernelKind::Attention;
        desc.width = width(attention.getResult());
        desc.heads = attention.getHeads();
        desc.kvHeads = attention.getKvHeads();
        desc.headDim = attention.getHeadDim();
        desc.scale = attention.getScale().convertToDouble();
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
      .Case([&](tm::LayerNormOp norm) {
        desc.kind = KernelKind::LayerNorm;
        desc.width = width(norm.getResult());
        desc.eps = norm.getEps().convertToDouble();
      })
      .Case([&](tm::AddLayerNormOp norm) {
        desc.kind = KernelKind::AddLayerNorm;
        desc.width = width(norm.getResult());
        desc.eps = norm.getEps().convertToDouble();
      });
  return desc;
}

/// Location as "name @ file:line:col" for error messages from the executable.
std::string describeLocation(Location loc) {
  std::string name, file;
  loc->walk([&](Location inner) {
    if (auto named = dyn_cast<NameLoc>(inner); named && name.empty())
      name = named.getName().str();
    if (auto fileLoc = dyn_cast<FileLineColLoc>(inner); fileLoc && file.empty())
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
    const Slot &out = calls[i].args.back();
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
    for (Slot &slot : call.args)
      if (slot.kind == Slot::Kind::Arena)
        slot.index = offsetOfCall[slot.index];
  return arenaWidth;
}

} // namespace

std::string KernelDesc::name() const {
  switch (kind) {
  case KernelKind::Embed:
    return llvm::formatv("embed_v{0}_d{1}_s{2}_{3}{4}", tableRows, width,
                         formatDouble(scale), position,
                         positionRows ? "_r" + std::to_string(positionRows) : std::string()).str();
  case KernelKind::AddPositions:
    return llvm::formatv("positions_d{0}_{1}{2}", width, position,
                         positionRows ? "_r" + std::to_string(positionRows) : std::string()).str();
  case KernelKind::Linear:
    return llvm::formatv("linear_k{0}_n{1}{2}_{3}", inWidth, width,
                         hasBias ? "_b" : "", activation).str();
  case KernelKind::Attention:
    return llvm::formatv("attention_h{0}_kv{1}_d{2}_s{3}", heads, kvHeads, headDim,
                         formatDouble(scale)).str();
  case KernelKind::Add:
    return llvm::formatv("add_d{0}", width).str();
  case KernelKind::Activation:
    return llvm::formatv("activation_d{0}_{1}", width, activation).str();
  case KernelKind::LayerNorm:
    return llvm::formatv("layer_norm_d{0}_e{1}", width, formatDouble(eps)).str();
  case KernelKind::AddLayerNorm:
    return llvm::formatv("add_layer_norm_d{0}_e{1}", width, formatDouble(eps)).str();
  }
  return "unknown";
}

std::vector<BufferShape> kernelSignature(const KernelDesc &k) {
  const int64_t T = -1;
  BufferShape rows{false, {k.width, T}};
  switch (k.kind) {
  case KernelKind::Embed: {
    std::vector<BufferShape> sig = {{true, {T}}, {false, {k.width, k.tableRows}}};
    if (k.position == "learned")
      sig.push_back({false, {k.width, k.positionRows}});
    sig.push_back(rows);
    return sig;
  }
  case KernelKind::AddPositions:
    if (k.position == "learned")
      return {rows, {false, {k.width, k.positionRows}}, rows};
    return {rows, rows};
  case KernelKind::Linear: {
    std::vector<BufferShape> sig = {{false, {k.inWidth, T}}, {false, {k.inWidth, k.width}}};
    if (k.hasBias)
      sig.push_back({false, {k.width}});
    sig.push_back(rows);
    return sig;
  }
  case KernelKind::Attention: {
    BufferShape q{false, {k.headDim, k.heads, T}}, kv{false, {k.headDim, k.kvHeads, T}};
    return {q, kv, kv, q};
  }
  case KernelKind::Add:
    return {rows, rows, rows};
  case KernelKind::Activation:
    return {rows, rows};
  case KernelKind::LayerNorm:
    return {rows, {false, {k.width}}, {false, {k.width}}, rows};
  case KernelKind::AddLayerNorm:
    return {rows, rows, {false, {k.width}}, {false, {k.width}}, rows};
  }
  return {};
}

FailureOr<KernelPlan> formKernels(ModuleOp module, const std::vector<std::string> &manifest) {
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward)
    return module.emitError("no func.func @forward to compile"), failure();
  std::map<std::string, int64_t> weightIndex;
  for (size_t i = 0; i < manifest.size(); ++i)
    weightIndex[manifest[i]] = static_cast<int64_t>(i);

  KernelPlan plan;
  std::map<std::string, size_t> kernelByName;
  // Until offsets are assigned, an arena slot's index is its defining call.
  llvm::DenseMap<Value, Slot> slots;
  std::vector<size_t> lastUse; // per call: the last call that reads its result
  slots[forward.getArgument(0)] = {Slot::Kind::Tokens, 0, 0};
  auto returnOp = cast<func::ReturnOp>(forward.getBody().front().getTerminator());
  Value result = returnOp.getOperand(0);
  plan.outputWidth = width(result);

  for (Operation &op : forward.getBody().front().without_terminator()) {
    if (auto weight = dyn_cast<tm::WeightOp>(op)) {
      auto it = weightIndex.find(weight.getName().str());
      if (it == weightIndex.end())
        return weight.emitOpError("names tensor '") << weight.getName()
               << "', which is not in the model's manifest", failure();
      slots[weight.getResult()] = {Slot::Kind::Weight, it->second, 0};
      continue;
    }
    if (!isa<tm::TMDialect>(op.getDialect()) || op.getNumResults() != 1)
      return op.emitOpError("cannot be mapped to a kernel"), failure();

    KernelDesc desc = describe(&op);
    std::string name = desc.name();
    auto [it, inserted] = kernelByName.try_emplace(name, plan.kernels.size());
    if (inserted)
      plan.kernels.push_back(desc);

    size_t callIndex = plan.calls.size();
    KernelCall call{it->second, {}, op.getName().getStringRef().str(),
                    describeLocation(op.getLoc())};
    for (Value operand : op.getOperands()) {
      Slot slot = slots.lookup(operand);
      if (slot.kind == Slot::Kind::Arena)
        lastUse[slot.index] = callIndex;
      call.args.push_back(slot);
    }
    Value out = op.getResult(0);
    Slot outSlot{out == result ? Slot::Kind::Output : Slot::Kind::Arena,
                 static_cast<int64_t>(callIndex), width(out)};
    slots[out] = outSlot;
    call.args.push_back(outSlot);
    plan.calls.push_back(std::move(call));
    lastUse.push_back(callIndex);
  }
  if (!slots.count(result) || slots[result].kind != Slot::Kind::Output)
    return forward.emitError("the model's result is not computed by a kernel"), failure();
  plan.arenaWidth = assignArenaOffsets(plan.calls, lastUse);
  return plan;
}

void printKernelPlan(const KernelPlan &plan, llvm::raw_ostream &os) {
  os << "// " << plan.kernels.size() << " kernels, " << plan.calls.size()
     << " calls, arena " << plan.arenaWidth << " x T floats, output "
     << plan.outputWidth << " x T floats\n\nkernels:\n";
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    os << "  k" << i << " " << plan.kernels[i].name() << " (";
    llvm::interleaveComma(kernelSignature(plan.kernels[i]), os, [&](const BufferShape &b) {
      os << (b.isInt32 ? "i32[" : "f32[");
      llvm::interleave(b.extents, os, [&](int64_t e) { os << (e < 0 ? "T" : std::to_string(e)); }, "x");
      os << "]";
    });
    os << ")\n";
  }
  os << "\ncalls:\n";
  for (const KernelCall &call : plan.calls) {
    os << "  k" << call.kernel << "(";
    llvm::interleaveComma(call.args, os, [&](const Slot &s) {
      switch (s.kind) {
      case Slot::Kind::Tokens: os << "tokens"; break;
      case Slot::Kind::Weight: os << "w" << s.index; break;
      case Slot::Kind::Arena: os << "arena+" << s.index << "T"; break;
      case Slot::Kind::Output: os << "output"; break;
      }
    });
    os << ")  // " << call.opName << " " << call.location << "\n";
  }
}

} // namespace tmc
