//===- MLIRGen.cpp - ModelSpec to the tm dialect --------------------------===//
//
// Walks the checked model description and emits one tm op per model-level
// computation, in execution order, mirroring the PyTorch semantics pinned in
// docs/spec-language.md. Weights are referenced by their canonical manifest
// names so that the executable can bind them by name.
//
//===----------------------------------------------------------------------===//

#include "frontend/MLIRGen.h"

#include "dialects/tm/TMOps.h"
#include "frontend/Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>

using namespace mlir;

namespace tmc {
namespace {

class ModelBuilder {
public:
  ModelBuilder(MLIRContext &context, const llvm::SourceMgr &sourceMgr,
               const ModelSpec &spec)
      : builder(&context), sourceMgr(sourceMgr), spec(spec) {
    for (const TensorSpec &tensor : buildManifest(spec))
      manifest[tensor.name] = tensor.shape;
  }

  OwningOpRef<ModuleOp> build() {
    Location modelLoc = loc(spec.loc, spec.name);
    OwningOpRef<ModuleOp> module = ModuleOp::create(modelLoc, spec.name);
    if (!checkSupported())
      return nullptr;

    auto f32 = builder.getF32Type();
    auto tokensType = RankedTensorType::get({ShapedType::kDynamic}, builder.getI32Type());
    hiddenType = RankedTensorType::get({ShapedType::kDynamic, spec.dModel}, f32);
    auto funcType = builder.getFunctionType({tokensType}, {hiddenType});
    builder.setInsertionPointToEnd(module->getBody());
    auto func = builder.create<func::FuncOp>(modelLoc, "forward", funcType);
    builder.setInsertionPointToStart(func.addEntryBlock());

    Value x = buildEmbedding(func.getArgument(0));
    x = buildStack("encoder", spec.encoder, x);
    builder.create<func::ReturnOp>(modelLoc, x);

    if (failed(verify(*module)))
      return nullptr;
    return module;
  }

private:
  /// NameLoc(prefix) around the spec position `at` (or the model's, if unset).
  Location loc(llvm::SMLoc at, StringRef name) {
    if (!at.isValid())
      at = spec.loc;
    Location fileLoc = builder.getUnknownLoc();
    if (at.isValid()) {
      unsigned buffer = sourceMgr.FindBufferContainingLoc(at);
      if (buffer != 0) {
        auto [line, col] = sourceMgr.getLineAndColumn(at, buffer);
        StringRef file = sourceMgr.getMemoryBuffer(buffer)->getBufferIdentifier();
        fileLoc = FileLineColLoc::get(builder.getContext(), file, line, col);
      }
    }
    return NameLoc::get(builder.getStringAttr(name), fileLoc);
  }

  bool unsupported(llvm::SMLoc at, const Twine &what) {
    emitError(loc(at, spec.name)) << what << " is not supported yet by this version of tmc";
    return false;
  }

  /// The code generator covers a subset of what the language describes; the
  /// rest is refused here, at the spec line, rather than miscompiled.
  bool checkSupported() {
    bool ok = true;
    if (spec.decoder.present)
      ok &= unsupported(spec.decoder.loc, "a decoder stack");
    if (!spec.encoder.present)
      ok &= unsupported(spec.loc, "a model without an encoder stack");
    if (spec.position == PositionKind::Rope || spec.position == PositionKind::Alibi)
      ok &= unsupported(spec.positionLoc, Twine("position = ") + toString(spec.position));
    if (spec.segments > 0)
      ok &= unsupported(spec.loc, "segments");
    if (spec.embedNorm && spec.embedNorm->kind != NormKind::LayerNorm)
      ok &= unsupported(spec.embedNorm->loc, "embed_norm = rmsnorm");
    if (spec.output != OutputKind::Hidden)
      ok &= unsupported(spec.outputLoc, "an output other than hidden");
    if (spec.dtype != DType::F32)
      ok &= unsupported(spec.loc, "a weight dtype other than f32");
    if (spec.encoder.present) {
      const StackSpec &stack = spec.encoder;
      for (const LayerSpec &layer : stack.layerSpecs)
        if (!sameLayer(layer, stack)) {
          ok &= unsupported(stack.loc, "a layer override (layers A..B { })");
          break;
        }
      if (!stack.mask.none())
        ok &= unsupported(stack.maskLoc.isValid() ? stack.maskLoc : stack.loc,
                          "a self-attention mask");
      if (stack.attention != AttentionKind::Full)
        ok &= unsupported(stack.attentionLoc, "attention = linformer");
      if (stack.crossAttention)
        ok &= unsupported(stack.loc, "cross_attention");
    }
    const StackSpec &stack = spec.encoder;
    if (stack.present) {
      if (stack.norm.kind != NormKind::LayerNorm ||
          (stack.finalNorm && stack.finalNorm->kind != NormKind::LayerNorm))
        ok &= unsupported(stack.normLoc.isValid() ? stack.normLoc : stack.loc, "rmsnorm");
      if (stack.ffn == Activation::SwiGLU || stack.ffn == Activation::GeGLU)
        ok &= unsupported(stack.ffnLoc, Twine("ffn = ") + toString(stack.ffn));
    }
    return ok;
  }

  /// Whether a layer keeps every key of its stack's base (no override).
  static bool sameLayer(const LayerSpec &a, const LayerSpec &b) {
    return a.heads == b.heads && a.kvHeads == b.kvHeads && a.headDim == b.headDim &&
           a.dFF == b.dFF && a.ffn == b.ffn && a.placement == b.placement &&
           a.norm.kind == b.norm.kind && a.norm.eps == b.norm.eps && a.bias == b.bias &&
           a.mask.terms.size() == b.mask.terms.size() && a.attention == b.attention &&
           a.linformerK == b.linformerK;
  }

  Value weight(StringRef name, Location at) {
    auto it = manifest.find(name);
    assert(it != manifest.end() && "MLIRGen asked for a tensor outside the manifest");
    auto type = RankedTensorType::get(it->second, builder.getF32Type());
    return builder.create<tm::WeightOp>(at, type, name);
  }

  Value maybeWeight(bool present, StringRef name, Location at) {
    return present ? weight(name, at) : Value();
  }

  RankedTensorType activations(int64_t width) {
    return RankedTensorType::get({ShapedType::kDynamic, width}, builder.getF32Type());
  }

  Value linear(Value x, const std::string &prefix, int64_t out, bool bias, Location at) {
    Value w = weight(prefix + ".weight", at);
    Value b = maybeWeight(bias, prefix + ".bias", at);
    return builder.create<tm::LinearOp>(at, activations(out), x, w, b,
                                        builder.getStringAttr("none"));
  }

  Value layerNorm(Value x, const std::string &prefix, const NormSpec &norm, Location at) {
    Value w = weight(prefix + ".weight", at);
    Value b = weight(prefix + ".bias", at);
    return builder.create<tm::LayerNormOp>(at, hiddenType, x, w, b,
                                           builder.getF64FloatAttr(norm.eps));
  }

  Value buildEmbedding(Value tokens) {
    Location at = loc(spec.loc, "embed");
    double scale = spec.embedScale ? std::sqrt(static_cast<double>(spec.dModel)) : 1.0;
    Value x = builder.create<tm::EmbedOp>(
        at, hiddenType, tokens, weight("embed.tokens", at), Value(),
        builder.getF64FloatAttr(scale), builder.getStringAttr("none"));
    if (spec.position == PositionKind::Sinusoidal || spec.position == PositionKind::Learned) {
      Location posAt = loc(spec.positionLoc, "embed.positions");
      bool learned = spec.position == PositionKind::Learned;
      x = builder.create<tm::AddPositionsOp>(
          posAt, hiddenType, x, maybeWeight(learned, "embed.positions", posAt),
          builder.getStringAttr(toString(spec.position)));
    }
    if (spec.embedNorm)
      x = layerNorm(x, "embed.norm", *spec.embedNorm, loc(spec.embedNorm->loc, "embed.norm"));
    return x;
  }

  Value buildAttention(Value x, const StackSpec &stack, const std::string &prefix) {
    Location at = loc(stack.attentionLoc.isValid() ? stack.attentionLoc : stack.loc, prefix);
    int64_t qWidth = stack.heads * stack.headDim, kvWidth = stack.kvHeads * stack.headDim;
    Value q = linear(x, prefix + ".q", qWidth, stack.bias, at);
    Value k = linear(x, prefix + ".k", kvWidth, stack.bias, at);
    Value v = linear(x, prefix + ".v", kvWidth, stack.bias, at);
    Value a = builder.create<tm::AttentionOp>(
        at, activations(qWidth), q, k, v, builder.getI64IntegerAttr(stack.heads),
        builder.getI64IntegerAttr(stack.kvHeads), builder.getI64IntegerAttr(stack.headDim),
        builder.getF64FloatAttr(1.0 / std::sqrt(static_cast<double>(stack.headDim))));
    return linear(a, prefix + ".o", spec.dModel, stack.bias, at);
  }

  Value buildFeedForward(Value x, const StackSpec &stack, const std::string &prefix) {
    Location at = loc(stack.ffnLoc.isValid() ? stack.ffnLoc : stack.loc, prefix);
    Value h = linear(x, prefix + ".up", stack.dFF, stack.bias, at);
    h = builder.create<tm::ActivationOp>(at, h.getType(), h,
                                         builder.getStringAttr(toString(stack.ffn)));
    return linear(h, prefix + ".down", spec.dModel, stack.bias, at);
  }

  /// post: x = norm(x + f(x));  pre: x = x + f(norm(x)).
  Value sublayer(Value x, const StackSpec &stack, const std::string &normPrefix,
                 llvm::function_ref<Value(Value)> body) {
    Location at = loc(stack.normLoc.isValid() ? stack.normLoc : stack.loc, normPrefix);
    if (stack.placement == NormPlacement::Post) {
      Value sum = builder.create<tm::AddOp>(at, x, body(x));
      return layerNorm(sum, normPrefix, stack.norm, at);
    }
    Value y = body(layerNorm(x, normPrefix, stack.norm, at));
    return builder.create<tm::AddOp>(at, x, y);
  }

  Value buildStack(const std::string &name, const StackSpec &stack, Value x) {
    for (int64_t i = 0; i < stack.layers; ++i) {
      std::string layer = name + ".layers." + std::to_string(i);
      x = sublayer(x, stack, layer + ".norm1",
                   [&](Value in) { return buildAttention(in, stack, layer + ".self_attn"); });
      x = sublayer(x, stack, layer + ".norm2",
                   [&](Value in) { return buildFeedForward(in, stack, layer + ".ffn"); });
    }
    if (stack.finalNorm)
      x = layerNorm(x, name + ".final_norm", *stack.finalNorm,
                    loc(stack.finalNorm->loc, name + ".final_norm"));
    return x;
  }

  OpBuilder builder;
  const llvm::SourceMgr &sourceMgr;
  const ModelSpec &spec;
  llvm::StringMap<std::vector<int64_t>> manifest;
  RankedTensorType hiddenType;
};

} // namespace

OwningOpRef<ModuleOp> buildModule(MLIRContext &context, const llvm::SourceMgr &sourceMgr,
                                  const ModelSpec &spec) {
  context.getOrLoadDialect<tm::TMDialect>();
  context.getOrLoadDialect<func::FuncDialect>();
  return ModelBuilder(context, sourceMgr, spec).build();
}

} // namespace tmc
