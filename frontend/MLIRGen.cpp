//===- MLIRGen.cpp - ModelSpec to the tm dialect --------------------------===//
//
// Walks the checked model description and emits one tm op per model-level
// computation, in execution order, mirroring the PyTorch semantics pinned in
// docs/spec-language.md. Weights are referenced by their canonical manifest
// names so that the executable can bind them by name.
//
// @forward takes the run's tokens and their offset (how many tokens of this
// sequence earlier runs already put in the decoder's key/value caches), so
// one function serves a prompt (offset 0) and each decoding step.
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
    llvm::StringRef specPath =
        sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBufferIdentifier();
    (*module)->setAttr(kSpecAttrName, builder.getStringAttr(specPath));
    if (!checkSupported())
      return nullptr;

    hiddenType = activations(spec.dModel);
    builder.setInsertionPointToEnd(module->getBody());
    if (spec.isEncoderDecoder())
      buildEncode(modelLoc);

    // @forward(tokens, offset[, segment ids]) -> output.
    int64_t outRows = spec.output == OutputKind::Classifier ? 1 : ShapedType::kDynamic;
    auto outType = RankedTensorType::get({outRows, spec.outputWidth()}, builder.getF32Type());
    auto func = createFunction(modelLoc, "forward", spec.isEncoderDecoder(), {outType});
    builder.setInsertionPointToStart(&func.getBody().front());

    const bool decoder = spec.decoder.present;
    // An encoder-decoder decoder has its own table unless embeddings are shared.
    std::string table =
        spec.isEncoderDecoder() && !spec.shareEmbeddings ? "decoder.embed.tokens" : "embed.tokens";
    Value x = buildEmbedding(func.getArgument(0), table);
    x = buildStack(decoder ? "decoder" : "encoder", decoder ? spec.decoder : spec.encoder, x,
                   decoder);
    x = buildOutput(x, table);
    if (failed(result))
      return nullptr;
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

  /// `at`'s spec position under another name: each computation of a layer is
  /// named for what it computes ("decoder.layers.0.self_attn.q"), so remarks,
  /// the kernel listing and `tmc verify` can tell them apart.
  Location named(StringRef name, Location at) {
    if (auto nameLoc = dyn_cast<NameLoc>(at))
      at = nameLoc.getChildLoc();
    return NameLoc::get(builder.getStringAttr(name), at);
  }

  /// The run's inputs a function takes, each marked with a `tm.input` name
  /// the kernel planner binds: tokens, offset (tokens already cached), length
  /// (valid tokens, for padding), source_length (@forward of an
  /// encoder-decoder) and segments (segment ids).
  func::FuncOp createFunction(Location at, StringRef name, bool sourceLength,
                              ArrayRef<Type> results) {
    auto tokensType = RankedTensorType::get({ShapedType::kDynamic}, builder.getI32Type());
    SmallVector<std::pair<StringRef, Type>> inputs = {
        {"tokens", tokensType}, {"offset", builder.getI32Type()}, {"length", builder.getI32Type()}};
    if (sourceLength)
      inputs.push_back({"source_length", builder.getI32Type()});
    if (spec.segments > 0)
      inputs.push_back({"segments", tokensType});
    SmallVector<Type> types;
    for (auto &input : inputs)
      types.push_back(input.second);
    auto func = builder.create<func::FuncOp>(at, name, builder.getFunctionType(types, results));
    Block *entry = func.addEntryBlock();
    this->inputs.clear();
    for (auto [index, input] : llvm::enumerate(inputs)) {
      func.setArgAttr(index, "tm.input", builder.getStringAttr(input.first));
      this->inputs[input.first] = entry->getArgument(index);
    }
    offset = this->inputs.lookup("offset");
    segmentIds = this->inputs.lookup("segments");
    return func;
  }

  /// @encode(source, offset[, segment ids]): the encoder runs once per source
  /// and leaves, for every decoder layer, the cross-attention keys and values
  /// in caches that each decoding step of @forward reads.
  void buildEncode(Location modelLoc) {
    auto func = createFunction(modelLoc, "encode", /*sourceLength=*/false, {});
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&func.getBody().front());
    Value memory = buildEmbedding(func.getArgument(0), "embed.tokens");
    memory = buildStack("encoder", spec.encoder, memory, /*decoder=*/false);
    // Without cross-attention (allowed, with a warning) nothing reads the
    // encoder's output, and the manifest has no cross_attn weights.
    for (int64_t i = 0; spec.decoder.crossAttention && i < spec.decoder.layers; ++i) {
      const LayerSpec &layer = spec.decoder.layer(i);
      std::string prefix = "decoder.layers." + std::to_string(i) + ".cross_attn";
      Location at = loc(layer.attentionLoc, prefix);
      int64_t kvWidth = layer.kvHeads * layer.headDim;
      for (const char *which : {"k", "v"}) {
        Value rows = linear(memory, prefix + "." + which, kvWidth, layer.bias, layer.precision, at);
        builder.create<tm::CacheAppendOp>(
            at, rows.getType(), rows, offset, builder.getStringAttr(prefix + "." + which),
            builder.getI64IntegerAttr(spec.maxSeq), cachePrecisionAttr(layer.kvCache));
      }
    }
    builder.create<func::ReturnOp>(modelLoc);
  }

  bool unsupported(llvm::SMLoc at, const Twine &what) {
    emitError(loc(at, spec.name)) << what << " is not supported yet by this version of tmc";
    return false;
  }

  /// The code generator covers a subset of what the language describes; the
  /// rest is refused here, at the spec line, rather than miscompiled.
  bool checkSupported() {
    bool ok = true;
    for (const StackSpec *stack : {&spec.encoder, &spec.decoder}) {
      if (!stack->present)
        continue;
      for (const LayerSpec &layer : stack->layerSpecs) {
        // Linformer projects keys along the sequence, so key positions are
        // gone: only padding (applied before projecting) can still mask.
        if (layer.attention == AttentionKind::Linformer) {
          bool onlyPadding = llvm::all_of(layer.mask.terms, [](const MaskTerm &term) {
            return term.kind == MaskKind::Padding;
          });
          if (!onlyPadding || spec.position == PositionKind::Alibi) {
            ok &= unsupported(layer.attentionLoc,
                              "attention = linformer with a mask other than padding, or alibi,");
            break;
          }
        }
        for (const MaskTerm &term : layer.mask.terms) {
          int count = 0;
          for (const MaskTerm &other : layer.mask.terms)
            count += other.kind == term.kind;
          if (count > 1) {
            ok &= unsupported(term.loc, Twine("a mask with two ") + toString(term.kind) +
                                            " terms");
            break;
          }
        }
      }
    }
    return ok;
  }

  Value weight(StringRef name, Location at) {
    auto it = manifest.find(name);
    if (it == manifest.end()) {
      // The manifest and this builder disagree: a compiler bug, reported
      // rather than asserted so a user sees which tensor.
      emitError(at) << "internal error: tensor '" << name << "' is not in the manifest";
      result = failure();
      return builder.create<tm::WeightOp>(at, RankedTensorType::get({1}, builder.getF32Type()),
                                          name);
    }
    auto type = RankedTensorType::get(it->second, builder.getF32Type());
    return builder.create<tm::WeightOp>(at, type, name);
  }

  Value maybeWeight(bool present, StringRef name, Location at) {
    return present ? weight(name, at) : Value();
  }

  RankedTensorType activations(int64_t width) {
    return RankedTensorType::get({ShapedType::kDynamic, width}, builder.getF32Type());
  }

  /// The `precision` attribute of a linear: absent for f32, so that the IR
  /// of a model that never asks for another precision is as it always was.
  StringAttr precisionAttr(Precision precision) {
    return precision == Precision::F32 ? StringAttr() : builder.getStringAttr(toString(precision));
  }

  /// A cache op's `precision`: absent for f32, as for a linear's.
  StringAttr cachePrecisionAttr(CachePrecision precision) {
    return precision == CachePrecision::F32 ? StringAttr()
                                            : builder.getStringAttr(toString(precision));
  }

  Value linear(Value x, const std::string &prefix, int64_t out, bool bias, Precision precision,
               Location at, StringRef activation = "none") {
    Value w = weight(prefix + ".weight", at);
    Value b = maybeWeight(bias, prefix + ".bias", at);
    auto rows = cast<ShapedType>(x.getType()).getDimSize(0);
    auto type = RankedTensorType::get({rows, out}, builder.getF32Type());
    return builder.create<tm::LinearOp>(named(prefix, at), type, x, w, b, /*residual=*/Value(),
                                        builder.getStringAttr(activation),
                                        precisionAttr(precision));
  }

  Value norm(Value x, const std::string &prefix, const NormSpec &spec, Location at) {
    bool layerNorm = spec.kind == NormKind::LayerNorm;
    Value w = weight(prefix + ".weight", at);
    Value b = maybeWeight(layerNorm, prefix + ".bias", at);
    return builder.create<tm::NormOp>(at, x.getType(), x, w, b,
                                      builder.getStringAttr(toString(spec.kind)),
                                      builder.getF64FloatAttr(spec.eps));
  }

  Value buildEmbedding(Value tokens, const std::string &table) {
    Location at = loc(spec.loc, "embed");
    double scale = spec.embedScale ? std::sqrt(static_cast<double>(spec.dModel)) : 1.0;
    Value x = builder.create<tm::EmbedOp>(
        at, hiddenType, tokens, offset, weight(table, at), Value(),
        builder.getF64FloatAttr(scale), builder.getStringAttr("none"));
    if (spec.position == PositionKind::Sinusoidal || spec.position == PositionKind::Learned) {
      Location posAt = loc(spec.positionLoc, "embed.positions");
      bool learned = spec.position == PositionKind::Learned;
      x = builder.create<tm::AddPositionsOp>(
          posAt, hiddenType, x, offset, maybeWeight(learned, "embed.positions", posAt),
          builder.getStringAttr(toString(spec.position)));
    }
    if (segmentIds)
      x = builder.create<tm::AddSegmentsOp>(at, hiddenType, x, segmentIds,
                                            weight("embed.segments", at));
    if (spec.embedNorm)
      x = norm(x, "embed.norm", *spec.embedNorm, loc(spec.embedNorm->loc, "embed.norm"));
    return x;
  }

  tm::MaskAttr maskAttr(const MaskSpec &mask, bool decoder) {
    const MaskTerm *window = mask.find(MaskKind::SlidingWindow);
    const MaskTerm *dilated = mask.find(MaskKind::DilatedWindow);
    const MaskTerm *global = mask.find(MaskKind::Global);
    const MaskTerm *random = mask.find(MaskKind::Random);
    return tm::MaskAttr::get(builder.getContext(), mask.has(MaskKind::Causal),
                             mask.has(MaskKind::Padding), decoder, window ? window->size : 0,
                             dilated ? dilated->size : 0, dilated ? dilated->dilation : 1,
                             global ? ArrayRef<int64_t>(global->tokens) : ArrayRef<int64_t>(),
                             random ? random->perRow : 0, random ? random->seed : 0,
                             // Only random keys and global positions depend on max_seq.
                             random || global ? spec.maxSeq : 0);
  }

  Value rope(Value x, const LayerSpec &layer, int64_t heads, Location at) {
    return builder.create<tm::RopeOp>(at, x.getType(), x, offset,
                                      builder.getI64IntegerAttr(heads),
                                      builder.getI64IntegerAttr(layer.headDim),
                                      builder.getF64FloatAttr(spec.ropeTheta));
  }

  Value buildAttention(Value x, const LayerSpec &layer, const std::string &prefix,
                       bool decoder) {
    Location at = loc(layer.attentionLoc, prefix);
    int64_t qWidth = layer.heads * layer.headDim, kvWidth = layer.kvHeads * layer.headDim;
    Value q = linear(x, prefix + ".q", qWidth, layer.bias, layer.precision, at);
    Value k = linear(x, prefix + ".k", kvWidth, layer.bias, layer.precision, at);
    Value v = linear(x, prefix + ".v", kvWidth, layer.bias, layer.precision, at);
    if (spec.position == PositionKind::Rope) {
      q = rope(q, layer, layer.heads, named(prefix + ".q", at));
      k = rope(k, layer, layer.kvHeads, named(prefix + ".k", at));
    }
    if (decoder) {
      // A decoder attends to every earlier token of the sequence, which
      // earlier runs left in the caches.
      auto append = [&](Value rows, const char *which) {
        return builder.create<tm::CacheAppendOp>(
            at, rows.getType(), rows, offset, builder.getStringAttr(prefix + "." + which),
            builder.getI64IntegerAttr(spec.maxSeq), cachePrecisionAttr(layer.kvCache));
      };
      k = append(k, "k");
      v = append(v, "v");
    }
    Value length = layer.mask.has(MaskKind::Padding) ? inputs.lookup("length") : Value();
    MaskSpec mask = layer.mask;
    if (layer.attention == AttentionKind::Linformer) {
      // Keys and values become linformerK rows; padding drops out before.
      auto project = [&](Value rows, const char *which) {
        Value e = weight(prefix.substr(0, prefix.rfind('.')) + ".attn_proj." + which + ".weight", at);
        auto type = RankedTensorType::get({layer.linformerK, kvWidth}, builder.getF32Type());
        return builder.create<tm::SeqProjectOp>(at, type, rows, e, length);
      };
      k = project(k, "k");
      v = project(v, "v");
      mask = MaskSpec();
      length = Value();
    }
    auto attention = builder.create<tm::AttentionOp>(
        layer.maskLoc.isValid() ? loc(layer.maskLoc, prefix + ".attn") : named(prefix + ".attn", at),
        activations(qWidth), q, k,
        v, length, builder.getI64IntegerAttr(layer.heads), builder.getI64IntegerAttr(layer.kvHeads),
        builder.getI64IntegerAttr(layer.headDim),
        builder.getF64FloatAttr(1.0 / std::sqrt(static_cast<double>(layer.headDim))),
        maskAttr(mask, decoder),
        spec.position == PositionKind::Alibi ? builder.getUnitAttr() : UnitAttr());
    return linear(attention, prefix + ".o", spec.dModel, layer.bias, layer.precision, at);
  }

  /// Queries from the decoder, keys and values from the encoder's output,
  /// which @encode left in caches. No causal mask, rope or alibi here.
  Value buildCrossAttention(Value x, const LayerSpec &layer, const std::string &prefix) {
    Location at = loc(layer.attentionLoc, prefix);
    int64_t qWidth = layer.heads * layer.headDim, kvWidth = layer.kvHeads * layer.headDim;
    Value q = linear(x, prefix + ".q", qWidth, layer.bias, layer.precision, at);
    auto read = [&](const char *which) {
      return builder.create<tm::CacheReadOp>(
          at, activations(kvWidth), builder.getStringAttr(prefix + "." + which),
          builder.getI64IntegerAttr(spec.maxSeq), cachePrecisionAttr(layer.kvCache));
    };
    Value k = read("k"), v = read("v");
    // Source keys past the source's valid length are always hidden.
    MaskSpec sourcePadding;
    sourcePadding.terms.push_back({MaskKind::Padding});
    auto attention = builder.create<tm::AttentionOp>(
        named(prefix + ".attn", at), activations(qWidth), q, k, v, inputs.lookup("source_length"),
        builder.getI64IntegerAttr(layer.heads), builder.getI64IntegerAttr(layer.kvHeads),
        builder.getI64IntegerAttr(layer.headDim),
        builder.getF64FloatAttr(1.0 / std::sqrt(static_cast<double>(layer.headDim))),
        maskAttr(sourcePadding, /*decoder=*/false), UnitAttr());
    return linear(attention, prefix + ".o", spec.dModel, layer.bias, layer.precision, at);
  }

  Value buildFeedForward(Value x, const LayerSpec &layer, const std::string &prefix) {
    Location at = loc(layer.ffnLoc, prefix);
    bool gated = layer.ffn == Activation::SwiGLU || layer.ffn == Activation::GeGLU;
    Value h;
    if (gated) {
      Value gate = linear(x, prefix + ".gate", layer.dFF, layer.bias, layer.precision, at);
      Value up = linear(x, prefix + ".up", layer.dFF, layer.bias, layer.precision, at);
      h = builder.create<tm::GatedActivationOp>(
          named(prefix + ".act", at), gate.getType(), gate, up,
          builder.getStringAttr(layer.ffn == Activation::SwiGLU ? "silu" : "gelu"));
    } else {
      h = linear(x, prefix + ".up", layer.dFF, layer.bias, layer.precision, at);
      // Named as the up projection it follows: fused or not, the last op
      // named ".up" yields act(up).
      h = builder.create<tm::ActivationOp>(named(prefix + ".up", at), h.getType(), h,
                                           builder.getStringAttr(toString(layer.ffn)));
    }
    return linear(h, prefix + ".down", spec.dModel, layer.bias, layer.precision, at);
  }

  /// post: x = norm(x + f(x));  pre: x = x + f(norm(x)).
  Value sublayer(Value x, const LayerSpec &layer, const std::string &normPrefix,
                 llvm::function_ref<Value(Value)> body) {
    Location at = loc(layer.normLoc, normPrefix);
    // "...layers.0.norm2" -> "...layers.0.residual2": the sum is a value of
    // its own (the residual stream, in pre-norm), apart from the norm's.
    std::string residual = normPrefix;
    residual.replace(residual.rfind(".norm"), 5, ".residual");
    if (layer.placement == NormPlacement::Post) {
      Value sum = builder.create<tm::AddOp>(named(residual, at), x, body(x));
      return norm(sum, normPrefix, layer.norm, at);
    }
    Value y = body(norm(x, normPrefix, layer.norm, at));
    return builder.create<tm::AddOp>(named(residual, at), x, y);
  }

  Value buildStack(const std::string &name, const StackSpec &stack, Value x, bool decoder) {
    for (int64_t i = 0; i < stack.layers; ++i) {
      const LayerSpec &layer = stack.layer(i);
      std::string prefix = name + ".layers." + std::to_string(i);
      x = sublayer(x, layer, prefix + ".norm1", [&](Value in) {
        return buildAttention(in, layer, prefix + ".self_attn", decoder);
      });
      bool cross = decoder && stack.crossAttention;
      if (cross)
        x = sublayer(x, layer, prefix + ".norm2", [&](Value in) {
          return buildCrossAttention(in, layer, prefix + ".cross_attn");
        });
      x = sublayer(x, layer, prefix + (cross ? ".norm3" : ".norm2"),
                   [&](Value in) { return buildFeedForward(in, layer, prefix + ".ffn"); });
    }
    if (stack.finalNorm)
      x = norm(x, name + ".final_norm", *stack.finalNorm,
               loc(stack.finalNorm->loc, name + ".final_norm"));
    return x;
  }

  Value buildOutput(Value x, const std::string &table) {
    Location at = loc(spec.outputLoc, "output");
    switch (spec.output) {
    case OutputKind::Hidden:
      return x;
    case OutputKind::LMHead: {
      // A tied head is a linear layer whose [vocab, d_model] weight is the
      // token table itself.
      Value w = weight(spec.tiedHead ? table : "output.weight", at);
      Value b = maybeWeight(spec.headBias, "output.bias", at);
      // The head takes the model-level precision: it belongs to no stack.
      return builder.create<tm::LinearOp>(at, activations(spec.vocab), x, w, b, Value(),
                                          builder.getStringAttr("none"),
                                          precisionAttr(spec.precision));
    }
    case OutputKind::Classifier: {
      auto pooledType = RankedTensorType::get({1, spec.dModel}, builder.getF32Type());
      bool mean = spec.pool == Pooling::Mean;
      Value pooled = builder.create<tm::PoolOp>(at, pooledType, x,
                                                mean ? inputs.lookup("length") : Value(),
                                                builder.getStringAttr(mean ? "mean" : "first"));
      if (spec.pooler)
        pooled = linear(pooled, "classifier.pooler", spec.dModel, /*bias=*/true, spec.precision, at,
                        "tanh");
      return linear(pooled, "classifier", spec.classes, /*bias=*/true, spec.precision, at);
    }
    }
    return x;
  }

  OpBuilder builder;
  const llvm::SourceMgr &sourceMgr;
  const ModelSpec &spec;
  llvm::StringMap<std::vector<int64_t>> manifest;
  RankedTensorType hiddenType;
  llvm::StringMap<Value> inputs; ///< the current function's run inputs by name
  Value offset;
  Value segmentIds;
  LogicalResult result = success();
};

} // namespace

OwningOpRef<ModuleOp> buildModule(MLIRContext &context, const llvm::SourceMgr &sourceMgr,
                                  const ModelSpec &spec) {
  context.getOrLoadDialect<tm::TMDialect>();
  context.getOrLoadDialect<func::FuncDialect>();
  return ModelBuilder(context, sourceMgr, spec).build();
}

} // namespace tmc
