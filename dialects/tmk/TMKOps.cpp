//===- TMKOps.cpp - Verifiers of the tmk operations -----------------------===//
//
// A kernel's kind fixes which static attributes it takes and how many
// inputs a call passes; the verifiers hold both, so that a pass (or a
// hand-edited module) that builds a wrong kernel or call fails at the spec
// location of the op it came from, not inside Halide.
//
//===----------------------------------------------------------------------===//

#include "dialects/tmk/TMKOps.h"

#include "dialects/tm/TMOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace tmc::tmk;

#include "dialects/tmk/TMKEnums.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/tmk/TMKOps.cpp.inc"

namespace {

/// The optional attributes each kind requires, and those it may take.
struct KindAttrs {
  llvm::SmallVector<StringRef> required, optional;
};

KindAttrs attrsOf(KernelKind kind) {
  switch (kind) {
  case KernelKind::embed:
    return {{"table_rows", "scale", "position"}, {"position_rows", "precision"}};
  case KernelKind::positions:
    return {{"position"}, {"position_rows"}};
  case KernelKind::segments:
    return {{"position_rows"}, {}};
  case KernelKind::linear:
    return {{"in_width", "activation"},
            {"bias", "residual", "precision", "rope_columns", "head_dim"}};
  case KernelKind::attention:
    return {{"heads", "kv_heads", "head_dim", "scale", "mask"},
            {"alibi", "kv_precision", "window_keys"}};
  case KernelKind::add:
    return {{}, {}};
  case KernelKind::activation:
  case KernelKind::gated_activation:
    return {{"activation"}, {}};
  case KernelKind::norm:
  case KernelKind::add_norm:
    return {{"variant", "eps"}, {"bias"}};
  case KernelKind::rope:
    return {{"heads", "head_dim"}, {}};
  case KernelKind::rope_table:
    return {{"head_dim", "theta"}, {}};
  case KernelKind::pool:
    return {{"variant"}, {}};
  case KernelKind::seq_project:
    return {{"table_rows", "position_rows"}, {"length"}};
  }
  return {};
}

LogicalResult expectOneOf(Operation *op, StringRef name, std::optional<StringRef> value,
                          ArrayRef<StringRef> allowed) {
  if (!value || llvm::is_contained(allowed, *value))
    return success();
  auto diag = op->emitOpError() << "has " << name << " = \"" << *value << "\"; expected one of";
  for (StringRef candidate : allowed)
    diag << " \"" << candidate << "\"";
  return diag;
}

int64_t dimOf(Type type, unsigned index) {
  auto shaped = dyn_cast<ShapedType>(type);
  return shaped && shaped.hasRank() && shaped.getRank() > index ? shaped.getDimSize(index)
                                                                : ShapedType::kDynamic;
}

} // namespace

LogicalResult KernelOp::verify() {
  KindAttrs allowed = attrsOf(getKind());
  static const StringRef kOptional[] = {
      "in_width",     "table_rows",  "position_rows", "heads",    "kv_heads",   "head_dim",
      "scale",        "eps",         "theta",         "position", "activation", "variant",
      "bias",         "residual",    "length",        "mask",     "alibi",      "precision",
      "kv_precision", "window_keys", "rope_columns"};
  for (StringRef name : kOptional) {
    bool present = static_cast<bool>((*this)->getAttr(name));
    bool required = llvm::is_contained(allowed.required, name);
    if (required && !present)
      return emitOpError("of kind ") << stringifyKernelKind(getKind()) << " needs '" << name
                                     << "'";
    if (present && !required && !llvm::is_contained(allowed.optional, name))
      return emitOpError("of kind ") << stringifyKernelKind(getKind()) << " takes no '"
                                     << name << "'";
  }
  // Every size is a Halide int32 index or extent: 1..kMaxExtent, so that
  // heads x head_dim below cannot overflow either.
  for (StringRef name : {"width", "in_width", "table_rows", "position_rows", "heads", "kv_heads",
                         "head_dim", "rope_columns"})
    if (auto value = (*this)->getAttrOfType<IntegerAttr>(name)) {
      if (value.getInt() <= 0)
        return emitOpError("needs ") << name << " > 0, found " << value.getInt();
      if (value.getInt() > tmc::tm::kMaxExtent)
        return emitOpError("needs ") << name << " <= " << tmc::tm::kMaxExtent
                                     << " (a Halide index), found " << value.getInt();
    }
  for (StringRef name : {"scale", "eps", "theta"})
    if (auto value = (*this)->getAttrOfType<FloatAttr>(name);
        value && failed(tmc::tm::expectPositiveFinite(*this, name, value.getValueAsDouble())))
      return failure();
  if (std::optional<tmc::tm::MaskAttr> mask = getMask())
    if (failed(tmc::tm::verifyMask([&] { return emitOpError(); }, *mask)))
      return failure();

  // tanh: a linear's epilogue only (BERT's pooler), as in tm.linear.
  static const StringRef kLinearActivations[] = {"none",      "relu", "gelu",
                                                 "gelu_tanh", "silu", "tanh"};
  static const StringRef kActivations[] = {"relu", "gelu", "gelu_tanh", "silu"};
  if (failed(expectOneOf(*this, "activation", getActivation(),
                         getKind() == KernelKind::linear ? ArrayRef<StringRef>(kLinearActivations)
                                                         : ArrayRef<StringRef>(kActivations))) ||
      failed(expectOneOf(*this, "precision", getPrecision(), {"f32", "bf16", "int8", "q4"})) ||
      failed(expectOneOf(*this, "kv_precision", getKvPrecision(), {"f16", "bf16"})))
    return failure();
  switch (getKind()) {
  case KernelKind::embed:
  case KernelKind::positions: {
    static const StringRef kPositions[] = {"none", "sinusoidal", "learned"};
    ArrayRef<StringRef> kinds(kPositions);
    if (failed(expectOneOf(*this, "position", getPosition(),
                           getKind() == KernelKind::embed ? kinds : kinds.drop_front())))
      return failure();
    if ((*getPosition() == "learned") != getPositionRows().has_value())
      return emitOpError("takes position_rows exactly when position = \"learned\"");
    break;
  }
  case KernelKind::attention:
    if (*getHeads() % *getKvHeads() != 0)
      return emitOpError("kv_heads (") << *getKvHeads() << ") must divide heads ("
                                       << *getHeads() << ")";
    [[fallthrough]];
  case KernelKind::rope:
    if (getKind() == KernelKind::rope && *getHeadDim() % 2 != 0)
      return emitOpError("needs an even head_dim, found ") << *getHeadDim();
    if (*getHeads() * *getHeadDim() != getWidth())
      return emitOpError("width ") << getWidth() << " is not heads x head_dim ("
                                   << *getHeads() << " x " << *getHeadDim() << ")";
    break;
  case KernelKind::norm:
  case KernelKind::add_norm:
    if (failed(expectOneOf(*this, "variant", getVariant(), {"layernorm", "rmsnorm"})))
      return failure();
    break;
  case KernelKind::pool:
    return expectOneOf(*this, "variant", getVariant(), {"first", "mean"});
  case KernelKind::linear:
    // A rotary epilogue turns whole heads of the outputs, from the first;
    // it applies to the sums as stored, so no activation or residual.
    if (getRopeColumns().has_value() != getHeadDim().has_value())
      return emitOpError("takes rope_columns and head_dim together");
    if (std::optional<uint64_t> columns = getRopeColumns()) {
      if (*getHeadDim() % 2 != 0)
        return emitOpError("needs an even head_dim, found ") << *getHeadDim();
      // Whole heads, the width too: a feature's partner is then always in
      // its own head (compiler/halide/LowerLinear.cpp relies on it).
      if (*columns % *getHeadDim() != 0 || *columns > getWidth() || getWidth() % *getHeadDim() != 0)
        return emitOpError("rope_columns ")
               << *columns << " and width " << getWidth() << " must be whole numbers of heads of "
               << *getHeadDim() << ", rope_columns <= width";
      if (*getActivation() != "none" || getResidual())
        return emitOpError("turns its outputs by rotary positions, so it takes no activation "
                           "or residual");
    }
    break;
  case KernelKind::rope_table:
    // Rows of cos then sin, half a head each.
    if (*getHeadDim() % 2 != 0)
      return emitOpError("needs an even head_dim, found ") << *getHeadDim();
    if (*getHeadDim() != getWidth())
      return emitOpError("width ") << getWidth() << " is not head_dim (" << *getHeadDim() << ")";
    break;
  default:
    break;
  }
  return success();
}

unsigned KernelOp::getNumInputs() {
  switch (getKind()) {
  case KernelKind::embed:
    return 3 + (getPositionRows() ? 1 : 0);
  case KernelKind::positions:
    return 2 + (getPositionRows() ? 1 : 0);
  case KernelKind::segments:
    return 3;
  case KernelKind::linear:
    return 2 + getBias() + getResidual() + (getRopeColumns() ? 1 : 0);
  case KernelKind::attention:
    return 3 + (getMask()->getPadding() ? 1 : 0);
  case KernelKind::add:
  case KernelKind::gated_activation:
    return 2;
  case KernelKind::activation:
    return 1;
  case KernelKind::norm:
    return 2 + getBias();
  case KernelKind::add_norm:
    return 3 + getBias();
  case KernelKind::rope:
    return 2; // the rows and their rope_table
  case KernelKind::rope_table:
    return 1; // the offset
  case KernelKind::pool:
    return 1 + (*getVariant() == "mean" ? 1 : 0);
  case KernelKind::seq_project:
    return 2 + getLength();
  }
  return 0;
}

bool KernelOp::mayOverwriteInput(unsigned index) {
  // This is a contract with compiler/halide: each element is read before its
  // own output is stored and never again, so a row's last partial vector must
  // be guarded, not shifted inwards over elements already written
  // (lowerElementwise in LowerElementwise.cpp; the GEMM's GuardWithIf tiles).
  switch (getKind()) {
  // Elementwise: row t, feature c reads its inputs at (t, c) alone.
  case KernelKind::add:
  case KernelKind::activation:
  case KernelKind::gated_activation:
    return true;
  // Norms stage the whole row (and its statistics) before writing it
  // (compute_at the row in LowerElementwise.cpp).
  case KernelKind::norm:
  case KernelKind::add_norm:
    return index == 0 || (getKind() == KernelKind::add_norm && index == 1);
  // The GEMM adds residual(t, n) as it stores out(t, n); its input rows are
  // read again for every panel of outputs.
  case KernelKind::linear:
    return getResidual() && index == (getBias() ? 3u : 2u);
  // Rope reads each feature's partner; attention, pooling and projections
  // read other rows. Positions and segments would qualify, but their vector
  // tail is shifted inwards (they are rare: fused into the embedding).
  default:
    return false;
  }
}

DictionaryAttr KernelOp::getSignatureAttrs() {
  NamedAttrList attrs((*this)->getAttrDictionary());
  attrs.erase(getSymNameAttrName());
  return attrs.getDictionary(getContext());
}

LogicalResult WeightOp::verify() {
  return tmc::tm::verifyWeightShape(*this, getName(), getResult().getType());
}

KernelOp CallOp::getKernelOp() {
  return SymbolTable::lookupNearestSymbolFrom<KernelOp>(*this, getKernelAttr());
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto kernel = symbolTable.lookupNearestSymbolFrom<KernelOp>(*this, getKernelAttr());
  if (!kernel)
    return emitOpError("calls '") << getKernel() << "', which is not a tmk.kernel";
  if (getArgs().size() != kernel.getNumInputs())
    return emitOpError("passes ") << getArgs().size() << " arguments; kernel @"
                                  << getKernel() << " takes " << kernel.getNumInputs();
  int64_t width = dimOf(getResult().getType(), 1);
  if (!ShapedType::isDynamic(width) && width != static_cast<int64_t>(kernel.getWidth()))
    return emitOpError("result has width ") << width << "; kernel @" << getKernel()
                                            << " writes " << kernel.getWidth();
  // Table sizes are baked into the kernel (an embedding clamps token ids to
  // table_rows - 1): a table of another size would be read wrongly or past
  // its end.
  auto expectTable = [&](unsigned arg, unsigned dim, std::optional<uint64_t> size,
                         StringRef attr) -> LogicalResult {
    int64_t actual = dimOf(getArgs()[arg].getType(), dim);
    if (!size || ShapedType::isDynamic(actual) || actual == static_cast<int64_t>(*size))
      return success();
    return emitOpError("argument ") << arg << " has size " << actual << " in dimension " << dim
                                    << "; kernel @" << getKernel() << " has " << attr << " = "
                                    << *size;
  };
  // A rope_table call's rows (a rope's, or a linear's with rope_columns).
  auto expectTableRows = [&](unsigned arg) -> LogicalResult {
    auto rows = dyn_cast<RankedTensorType>(getArgs()[arg].getType());
    if (rows && rows.getRank() == 2)
      return success();
    return emitOpError("argument ")
           << arg << " must be rope_table rows (a 2-D tensor), found " << getArgs()[arg].getType();
  };
  switch (kernel.getKind()) {
  case KernelKind::embed:
    if (failed(expectTable(2, 0, kernel.getTableRows(), "table_rows")) ||
        (kernel.getPositionRows() &&
         failed(expectTable(3, 0, kernel.getPositionRows(), "position_rows"))))
      return failure();
    break;
  case KernelKind::positions:
    if (kernel.getPositionRows() &&
        failed(expectTable(2, 0, kernel.getPositionRows(), "position_rows")))
      return failure();
    break;
  case KernelKind::segments:
    if (failed(expectTable(2, 0, kernel.getPositionRows(), "position_rows")))
      return failure();
    break;
  case KernelKind::rope:
    // Its table's rows: cos and sin, half a head each.
    if (failed(expectTableRows(1)) || failed(expectTable(1, 1, kernel.getHeadDim(), "head_dim")))
      return failure();
    break;
  case KernelKind::seq_project:
    if (failed(expectTable(1, 0, kernel.getTableRows(), "table_rows")) ||
        failed(expectTable(1, 1, kernel.getPositionRows(), "position_rows")))
      return failure();
    break;
  default:
    break;
  }
  if (kernel.getKind() == KernelKind::linear) {
    // The rope_table rows, last.
    if (kernel.getRopeColumns() &&
        (failed(expectTableRows(getArgs().size() - 1)) ||
         failed(expectTable(getArgs().size() - 1, 1, kernel.getHeadDim(), "head_dim"))))
      return failure();
    int64_t in = dimOf(getArgs()[0].getType(), 1);
    if (!ShapedType::isDynamic(in) && in != static_cast<int64_t>(*kernel.getInWidth()))
      return emitOpError("input has width ") << in << "; kernel @" << getKernel()
                                             << " reads " << *kernel.getInWidth();
  }
  return success();
}

LogicalResult CacheAppendOp::verify() {
  if (failed(tmc::tm::verifyCache(*this, getName(), getCapacity(), getPrecision())))
    return failure();
  if (std::optional<int64_t> keep = getKeep();
      keep && (*keep < 0 || *keep >= static_cast<int64_t>(getCapacity())))
    return emitOpError("keeps ") << *keep << " earlier rows in a capacity of " << getCapacity()
                                 << "; 0 <= keep < capacity";
  return success();
}

LogicalResult ConcatOp::verify() {
  return tmc::tm::verifyStackedWeights(*this, getInputs(), getResult());
}

LogicalResult SplitOp::verify() { return tmc::tm::verifyColumnSplit(*this, getInput(), getResults()); }

LogicalResult CacheReadOp::verify() {
  return tmc::tm::verifyCache(*this, getName(), getCapacity(), getPrecision());
}
