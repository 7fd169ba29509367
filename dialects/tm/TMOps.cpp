//===- TMOps.cpp - Verifiers of the tm operations -------------------------===//
//
// The verifiers state the shape algebra of each op. A spec error that slipped
// past the frontend, or a pass that built a wrong op, fails here with the op's
// location, which points back at the spec line.
//
//===----------------------------------------------------------------------===//

#include "dialects/tm/TMOps.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace tmc::tm;

namespace {

int64_t dim(Value value, unsigned index) {
  return cast<ShapedType>(value.getType()).getDimSize(index);
}

/// Checks that `value`'s dimension `index` equals `expected`, treating a dynamic
/// size on either side as unknown (it is checked at run time).
LogicalResult expectDim(Operation *op, Value value, unsigned index,
                        int64_t expected, StringRef what) {
  int64_t actual = dim(value, index);
  if (ShapedType::isDynamic(actual) || ShapedType::isDynamic(expected) ||
      actual == expected)
    return success();
  return op->emitOpError() << what << " has size " << actual
                           << " in dimension " << index << ", expected "
                           << expected;
}

LogicalResult expectOneOf(Operation *op, StringRef attrName, StringRef value,
                          ArrayRef<StringRef> allowed) {
  if (llvm::is_contained(allowed, value))
    return success();
  auto diag = op->emitOpError() << "has " << attrName << " = \"" << value
                                << "\"; expected one of";
  for (StringRef candidate : allowed)
    diag << " \"" << candidate << "\"";
  return diag;
}

/// A linear layer's epilogue: tanh serves BERT's pooler only, so the
/// standalone activations (of feed-forward layers) do not take it.
const StringRef kLinearActivations[] = {"none", "relu", "gelu", "gelu_tanh", "silu", "tanh"};
const StringRef kActivations[] = {"relu", "gelu", "gelu_tanh", "silu"};

/// heads, kv_heads and head_dim: 1..kMaxExtent each, and heads x head_dim
/// (the width the op reads) no more than kMaxExtent either, so that neither
/// the verifier's products nor Halide's int32 indices overflow.
LogicalResult expectHeads(Operation *op, ArrayRef<std::pair<StringRef, int64_t>> counts,
                          int64_t heads, int64_t headDim) {
  for (auto [name, value] : counts)
    if (value < 1 || value > kMaxExtent)
      return op->emitOpError("needs ") << name << " in 1.." << kMaxExtent << ", found " << value;
  if (heads > kMaxExtent / headDim)
    return op->emitOpError("heads x head_dim (") << heads << " x " << headDim
                                                 << ") is more than " << kMaxExtent;
  return success();
}

} // namespace

LogicalResult tmc::tm::expectPositiveFinite(Operation *op, StringRef name, double value) {
  // NaN fails `value > 0`; an infinity would give NaN or inf in every output.
  if (std::isfinite(value) && value > 0)
    return success();
  auto diag = op->emitOpError("needs ") << name << " > 0 and finite, found ";
  // The diagnostic would print NaN as "nan" but an infinity as "INF".
  if (std::isnan(value))
    return diag << "nan";
  if (std::isinf(value))
    return diag << (value > 0 ? "inf" : "-inf");
  return diag << value;
}

LogicalResult tmc::tm::verifyCache(Operation *op, StringRef name, int64_t capacity,
                                   std::optional<StringRef> precision) {
  if (name.empty() || capacity < 1)
    return op->emitOpError("needs a cache name and a capacity > 0");
  if (precision && *precision != "f16" && *precision != "bf16")
    return op->emitOpError("has precision = \"")
           << *precision << "\"; a cache stores \"f16\" or \"bf16\" rows, or f32 without it";
  if (capacity > kMaxExtent)
    return op->emitOpError("needs a capacity of at most ") << kMaxExtent << " rows, found "
                                                           << capacity;
  return success();
}

LogicalResult tmc::tm::verifyWeightShape(Operation *op, StringRef name, ShapedType type) {
  if (name.empty())
    return op->emitOpError("needs a non-empty tensor name");
  if (!type.hasStaticShape())
    return op->emitOpError("weight '") << name << "' must have a static shape";
  for (auto [index, size] : llvm::enumerate(type.getShape()))
    if (size < 1 || size > kMaxExtent)
      return op->emitOpError("weight '")
             << name << "' has size " << size << " in dimension " << index
             << "; sizes are 1.." << kMaxExtent;
  return success();
}

#define GET_OP_CLASSES
#include "dialects/tm/TMOps.cpp.inc"

LogicalResult WeightOp::verify() {
  return verifyWeightShape(*this, getName(), cast<ShapedType>(getResult().getType()));
}

LogicalResult tmc::tm::verifyStackedWeights(Operation *op, ValueRange inputs, Value result) {
  if (inputs.size() < 2)
    return op->emitOpError("needs at least two weights to stack");
  auto type = cast<ShapedType>(result.getType());
  if (!type.hasStaticShape())
    return op->emitOpError("result must have a static shape");
  int64_t rows = 0;
  for (auto [index, input] : llvm::enumerate(inputs)) {
    auto inputType = cast<ShapedType>(input.getType());
    if (!inputType.hasStaticShape() || inputType.getRank() != type.getRank())
      return op->emitOpError("input ") << index << " must be a static tensor of rank "
                                       << type.getRank();
    for (int64_t d = 1; d < inputType.getRank(); ++d)
      if (inputType.getDimSize(d) != type.getDimSize(d))
        return op->emitOpError("input ") << index << " has size " << inputType.getDimSize(d)
                                         << " in dimension " << d << ", expected "
                                         << type.getDimSize(d);
    rows += inputType.getDimSize(0);
  }
  for (auto [index, size] : llvm::enumerate(type.getShape()))
    if (size < 1 || size > kMaxExtent)
      return op->emitOpError("result has size ") << size << " in dimension " << index
                                                 << "; sizes are 1.." << kMaxExtent;
  if (rows != type.getDimSize(0))
    return op->emitOpError("result has ") << type.getDimSize(0)
                                          << " rows; the inputs stack to " << rows;
  return success();
}

LogicalResult tmc::tm::verifyColumnSplit(Operation *op, Value input, ValueRange parts) {
  if (parts.size() < 2)
    return op->emitOpError("needs at least two parts");
  int64_t total = 0;
  for (auto [index, part] : llvm::enumerate(parts)) {
    int64_t width = dim(part, 1);
    if (ShapedType::isDynamic(width))
      return op->emitOpError("part ") << index << " must have a static width";
    total += width;
    if (failed(expectDim(op, part, 0, dim(input, 0), "part rows")))
      return failure();
  }
  int64_t width = dim(input, 1);
  if (!ShapedType::isDynamic(width) && total != width)
    return op->emitOpError("parts are ") << total << " columns wide; the input has " << width;
  return success();
}

LogicalResult ConcatOp::verify() { return verifyStackedWeights(*this, getInputs(), getResult()); }

LogicalResult SplitOp::verify() { return verifyColumnSplit(*this, getInput(), getResults()); }

LogicalResult EmbedOp::verify() {
  if (getTable().getType().getRank() != 2)
    return emitOpError("table must be [vocab, d_model]");
  int64_t width = dim(getTable(), 1);
  if (failed(expectDim(*this, getResult(), 1, width, "result")) ||
      failed(expectOneOf(*this, "position", getPosition(),
                         {"none", "sinusoidal", "learned"})) ||
      failed(expectPositiveFinite(*this, "scale", getScale().convertToDouble())))
    return failure();
  bool learned = getPosition() == "learned";
  if (learned != static_cast<bool>(getPositions()))
    return emitOpError("takes a positions table exactly when position = \"learned\"");
  if (learned && (getPositions().getType().getRank() != 2 ||
                  failed(expectDim(*this, getPositions(), 1, width, "positions"))))
    return failure();
  return success();
}

LogicalResult AddPositionsOp::verify() {
  if (failed(expectOneOf(*this, "kind", getKind(), {"sinusoidal", "learned"})))
    return failure();
  bool learned = getKind() == "learned";
  if (learned != static_cast<bool>(getTable()))
    return emitOpError("takes a positions table exactly when kind = \"learned\"");
  if (learned && (getTable().getType().getRank() != 2 ||
                  failed(expectDim(*this, getTable(), 1, dim(getInput(), 1),
                                   "positions table"))))
    return failure();
  return success();
}

LogicalResult AddSegmentsOp::verify() {
  if (getTable().getType().getRank() != 2)
    return emitOpError("segment table must be [segments, d_model]");
  return expectDim(*this, getTable(), 1, dim(getInput(), 1), "segment table");
}

LogicalResult LinearOp::verify() {
  int64_t out = dim(getWeight(), 0), in = dim(getWeight(), 1);
  if (failed(expectDim(*this, getInput(), 1, in, "input")) ||
      failed(expectDim(*this, getResult(), 1, out, "result")) ||
      failed(expectDim(*this, getResult(), 0, dim(getInput(), 0), "result")) ||
      failed(expectOneOf(*this, "activation", getActivation(), kLinearActivations)) ||
      failed(
          expectOneOf(*this, "precision", getEffectivePrecision(), {"f32", "bf16", "int8", "q4"})))
    return failure();
  if (getBias() && failed(expectDim(*this, getBias(), 0, out, "bias")))
    return failure();
  // An int8 GEMM sums up to K products of 255 x 127 exactly in int32. A q4
  // GEMM has no such limit: it sums each block of 32 products in int32
  // (at most 32 * 8 * 127 in magnitude) and the blocks in f32.
  constexpr int64_t kInt8MaxInputs = (int64_t(1) << 31) / (255 * 127);
  if (getEffectivePrecision() == "int8" && in > kInt8MaxInputs)
    return emitOpError("precision int8 sums ")
           << in << " products per output in int32; at most " << kInt8MaxInputs
           << " fit (keep this layer in f32, bf16 or q4)";
  if (getResidual() && getResidual().getType() != getResult().getType())
    return emitOpError("residual has type ")
           << getResidual().getType() << ", expected the result's " << getResult().getType();
  return success();
}

LogicalResult AttentionOp::verify() {
  int64_t heads = getHeads(), kvHeads = getKvHeads(), headDim = getHeadDim();
  if (failed(expectHeads(*this, {{"heads", heads}, {"kv_heads", kvHeads}, {"head_dim", headDim}},
                         heads, headDim)))
    return failure();
  if (heads % kvHeads != 0)
    return emitOpError("kv_heads (") << kvHeads << ") must divide heads ("
                                     << heads << ")";
  if (failed(expectPositiveFinite(*this, "scale", getScale().convertToDouble())) ||
      failed(verifyMask([&] { return emitOpError(); }, getMask())))
    return failure();
  if (getMask().getPadding() != static_cast<bool>(getLength()))
    return emitOpError("takes a length operand exactly when its mask has padding");
  if (failed(expectDim(*this, getQuery(), 1, heads * headDim, "query")) ||
      failed(expectDim(*this, getKey(), 1, kvHeads * headDim, "key")) ||
      failed(expectDim(*this, getValue(), 1, kvHeads * headDim, "value")) ||
      failed(expectDim(*this, getResult(), 1, heads * headDim, "result")))
    return failure();
  return success();
}

LogicalResult ActivationOp::verify() { return expectOneOf(*this, "kind", getKind(), kActivations); }

namespace {
LogicalResult verifyNormParams(Operation *op, Value input, Value weight, Value bias,
                               StringRef kind, double eps) {
  int64_t width = dim(input, 1);
  if (failed(expectOneOf(op, "kind", kind, {"layernorm", "rmsnorm"})) ||
      failed(expectDim(op, weight, 0, width, "weight")) ||
      (bias && failed(expectDim(op, bias, 0, width, "bias"))) ||
      failed(expectDim(op, op->getResult(0), 1, width, "result")))
    return failure();
  if (kind == "layernorm" && !bias)
    return op->emitOpError("kind = \"layernorm\" needs a bias operand");
  if (kind == "rmsnorm" && bias)
    return op->emitOpError("kind = \"rmsnorm\" takes no bias operand");
  return expectPositiveFinite(op, "eps", eps);
}
} // namespace

LogicalResult NormOp::verify() {
  return verifyNormParams(*this, getInput(), getWeight(), getBias(), getKind(),
                          getEps().convertToDouble());
}

LogicalResult AddNormOp::verify() {
  if (getInput().getType() != getResidual().getType())
    return emitOpError("input and residual must have the same type");
  return verifyNormParams(*this, getInput(), getWeight(), getBias(), getKind(),
                          getEps().convertToDouble());
}

LogicalResult RopeOp::verify() {
  int64_t heads = getHeads(), headDim = getHeadDim();
  if (failed(expectHeads(*this, {{"heads", heads}, {"head_dim", headDim}}, heads, headDim)))
    return failure();
  if (headDim % 2 != 0)
    return emitOpError("needs heads > 0 and an even head_dim > 0, found head_dim = ")
           << headDim;
  if (failed(expectPositiveFinite(*this, "theta", getTheta().convertToDouble())))
    return failure();
  return expectDim(*this, getInput(), 1, heads * headDim, "input");
}

LogicalResult GatedActivationOp::verify() {
  return expectOneOf(*this, "kind", getKind(), kActivations);
}

LogicalResult SeqProjectOp::verify() {
  int64_t rows = dim(getProjection(), 0);
  if (failed(expectDim(*this, getResult(), 0, rows, "result")) ||
      failed(expectDim(*this, getResult(), 1, dim(getInput(), 1), "result")))
    return failure();
  return success();
}

LogicalResult PoolOp::verify() {
  if ((getKind() == "mean") != static_cast<bool>(getLength()))
    return emitOpError("takes a length operand exactly when kind = \"mean\"");
  if (failed(expectOneOf(*this, "kind", getKind(), {"first", "mean"})) ||
      failed(expectDim(*this, getResult(), 1, dim(getInput(), 1), "result")) ||
      failed(expectDim(*this, getResult(), 0, 1, "result")))
    return failure();
  return success();
}

LogicalResult CacheAppendOp::verify() {
  return verifyCache(*this, getName(), getCapacity(), getPrecision());
}

LogicalResult CacheReadOp::verify() {
  return verifyCache(*this, getName(), getCapacity(), getPrecision());
}

std::string tmc::tm::originName(Location loc) {
  std::string name;
  loc->walk([&](Location inner) {
    if (auto named = dyn_cast<NameLoc>(inner)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

Location tmc::tm::withoutNames(Location loc) {
  if (auto named = dyn_cast<NameLoc>(loc))
    return withoutNames(named.getChildLoc());
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    SmallVector<Location> parts;
    for (Location part : fused.getLocations())
      parts.push_back(withoutNames(part));
    return FusedLoc::get(loc.getContext(), parts, fused.getMetadata());
  }
  return loc;
}

std::string tmc::tm::originPrefix(Location loc) {
  std::string name = originName(loc);
  return name.empty() ? name : "[" + name + "] ";
}
