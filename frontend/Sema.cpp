//===- Sema.cpp - Model-level keys and the stacks they hold ---------------===//

#include "frontend/Sema.h"

#include "frontend/ModelStats.h"
#include "frontend/SemaValues.h"

using namespace llvm;

namespace tmc {

using namespace sema;

ArrayRef<StringRef> modelKeys() {
  static const StringRef keys[] = {"vocab",       "d_model",    "max_seq",   "position",
                                   "embed_scale", "embed_norm", "segments",  "share_embeddings",
                                   "output",      "dtype",      "precision", "kv_cache",
                                   "weights"};
  return keys;
}

namespace {

class ModelChecker {
public:
  ModelChecker(const ast::Model &model, DiagnosticEngine &diags,
               const SpecOverrides &overrides)
      : model(model), diags(diags), overrides(overrides), reader(diags) {}

  std::optional<ModelSpec> check() {
    unsigned errorsBefore = diags.errorCount();
    spec.name = model.name;
    spec.loc = model.loc;
    const Misplaced elsewhere[] = {{stackKeys(), "inside encoder { } or decoder { }"}};
    keys = reader.collectKeys(model.assignments, "model", modelKeys(), elsewhere);
    checkSizes();
    checkPosition();
    checkEmbedding();
    checkOutput();
    checkDType();
    checkWeights();
    checkPrecision();
    checkStacks();
    checkApplicability();
    if (diags.errorCount() != errorsBefore)
      return std::nullopt;
    checkTotals();
    if (diags.errorCount() != errorsBefore)
      return std::nullopt;
    return std::move(spec);
  }

private:
  const ast::Assignment *key(StringRef name) const { return keys.lookup(name); }

  void checkSizes() {
    struct Required {
      StringRef name;
      int64_t ModelSpec::*field;
    };
    const Required required[] = {{"vocab", &ModelSpec::vocab},
                                 {"d_model", &ModelSpec::dModel},
                                 {"max_seq", &ModelSpec::maxSeq}};
    for (const Required &r : required) {
      if (const ast::Assignment *a = key(r.name)) {
        if (std::optional<int64_t> value = reader.integer(*a->value, r.name, 1))
          spec.*r.field = *value;
      } else if (!reader.wasSuggested(r.name)) {
        diags.error(model.loc,
                    "missing required key '" + r.name + "' in model '" +
                        model.name + "'",
                    "add " + r.name + " = ... to the model block");
      }
    }
    if (const ast::Assignment *a = key("segments"))
      if (std::optional<int64_t> value =
              reader.integer(*a->value, "segments", 0))
        spec.segments = *value;
  }

  void checkPosition() {
    const ast::Assignment *a = key("position");
    if (!a)
      return;
    spec.positionLoc = a->loc;
    static const StringRef theta[] = {"theta"};
    const Choice choices[] = {
        {"sinusoidal"}, {"learned"}, {"none"}, {"rope", theta}, {"alibi"}};
    const PositionKind kinds[] = {PositionKind::Sinusoidal,
                                  PositionKind::Learned, PositionKind::None,
                                  PositionKind::Rope, PositionKind::Alibi};
    std::optional<Chosen> chosen =
        reader.choose(*a->value, "position", choices);
    if (!chosen)
      return;
    spec.position = kinds[chosen->index];
    if (const ast::Value *value = chosen->arg("theta"))
      if (std::optional<double> theta = reader.number(*value, "theta", true))
        spec.ropeTheta = *theta;
  }

  void checkEmbedding() {
    if (const ast::Assignment *a = key("embed_scale"))
      if (std::optional<bool> value = reader.boolean(*a->value, "embed_scale"))
        spec.embedScale = *value;
    if (const ast::Assignment *a = key("embed_norm")) {
      bool isNone;
      spec.embedNorm =
          reader.norm(*a->value, "embed_norm", /*allowNone=*/true, isNone);
    }
    if (const ast::Assignment *a = key("share_embeddings"))
      if (std::optional<bool> value =
              reader.boolean(*a->value, "share_embeddings"))
        spec.shareEmbeddings = *value;
  }

  void checkOutput() {
    const ast::Assignment *a = key("output");
    if (!a)
      return;
    spec.outputLoc = a->loc;
    static const StringRef lmArgs[] = {"tied", "bias"};
    static const StringRef classifierArgs[] = {"classes", "pool", "pooler"};
    const Choice choices[] = {
        {"hidden"},
        {"lm_head", lmArgs},
        {"classifier", classifierArgs,
         ArrayRef<StringRef>(classifierArgs).take_front()}};
    std::optional<Chosen> chosen = reader.choose(*a->value, "output", choices);
    if (!chosen)
      return;
    const OutputKind kinds[] = {OutputKind::Hidden, OutputKind::LMHead,
                                OutputKind::Classifier};
    spec.output = kinds[chosen->index];
    if (const ast::Value *value = chosen->arg("tied"))
      spec.tiedHead = reader.boolean(*value, "tied").value_or(spec.tiedHead);
    if (const ast::Value *value = chosen->arg("bias"))
      spec.headBias = reader.boolean(*value, "bias").value_or(spec.headBias);
    if (const ast::Value *value = chosen->arg("classes"))
      spec.classes = reader.integer(*value, "classes", 1).value_or(0);
    if (const ast::Value *value = chosen->arg("pooler"))
      spec.pooler = reader.boolean(*value, "pooler").value_or(false);
    if (const ast::Value *value = chosen->arg("pool")) {
      const Choice pools[] = {{"first"}, {"mean"}};
      if (std::optional<Chosen> pool = reader.choose(*value, "pool", pools))
        spec.pool = pool->index == 0 ? Pooling::First : Pooling::Mean;
    }
  }

  void checkDType() {
    const ast::Assignment *a = key("dtype");
    if (!a)
      return;
    const Choice choices[] = {{"f32"}, {"f16"}, {"bf16"}};
    const DType types[] = {DType::F32, DType::F16, DType::BF16};
    std::optional<Chosen> chosen = reader.choose(*a->value, "dtype", choices);
    if (!chosen)
      return;
    spec.dtype = types[chosen->index];
  }

  /// `weights = canonical | huggingface(gpt2 | bert | llama)`: the names
  /// and layouts the executable's weight files use.
  void checkWeights() {
    const ast::Assignment *a = key("weights");
    if (!a)
      return;
    static const StringRef familyArg[] = {"family"};
    const Choice choices[] = {{"canonical"}, {"huggingface", familyArg, {}, /*positional=*/true}};
    std::optional<Chosen> chosen = reader.choose(*a->value, "weights", choices);
    if (!chosen || chosen->index == 0)
      return;
    const ast::Value *family = chosen->positional ? chosen->positional : chosen->arg("family");
    if (!family) {
      diags.error(a->value->loc, "huggingface() needs the checkpoint's family",
                  "write huggingface(gpt2), huggingface(bert) or huggingface(llama) (Llama, "
                  "Mistral and Qwen2 checkpoints)");
      return;
    }
    const Choice families[] = {{"gpt2"}, {"bert"}, {"llama"}};
    if (std::optional<Chosen> which = reader.choose(*family, "family", families))
      spec.weightScheme = families[which->index].name.str();
  }

  /// Read before the stacks, which inherit it. --precision replaces the
  /// key's value, not the stacks' or layers' own keys; the key is still
  /// checked, so that a bad value is reported either way.
  void checkPrecision() {
    if (const ast::Assignment *a = key("precision")) {
      spec.precisionLoc = a->loc;
      if (std::optional<Precision> precision = reader.precision(*a->value, "precision"))
        spec.precision = *precision;
    }
    if (overrides.precision)
      spec.precision = *overrides.precision;
    if (const ast::Assignment *a = key("kv_cache")) {
      spec.kvCacheLoc = a->loc;
      if (std::optional<CachePrecision> kv = reader.cachePrecision(*a->value, "kv_cache"))
        spec.kvCache = *kv;
    }
    if (overrides.kvCache)
      spec.kvCache = *overrides.kvCache;
  }

  void checkStacks() {
    const ast::Stack *encoder = nullptr, *decoder = nullptr;
    for (const ast::Stack &stack : model.stacks) {
      const ast::Stack *&slot = stack.kind == "encoder" ? encoder : decoder;
      if (slot) {
        diags.error(stack.loc, "duplicate '" + stack.kind + "' block");
        diags.note(slot->loc, "first given here");
        continue;
      }
      slot = &stack;
    }
    if (!encoder && !decoder) {
      diags.error(model.loc,
                  "model '" + model.name + "' has no encoder or decoder block",
                  "add a stack, e.g. encoder { layers = 2; heads = 4 }");
      return;
    }
    StackContext context;
    context.hasEncoder = encoder != nullptr;
    context.hasDecoder = decoder != nullptr;
    if (encoder)
      checkStack(reader, *encoder, spec, context, spec.encoder);
    if (decoder) {
      context.isDecoder = true;
      checkStack(reader, *decoder, spec, context, spec.decoder);
    }
  }

  /// Model keys that mean nothing, or something odd, for the stacks present.
  void checkApplicability() {
    bool encoder = spec.encoder.present, decoder = spec.decoder.present;
    if (!encoder && !decoder)
      return;
    if (const ast::Assignment *a = key("share_embeddings"); a && !(encoder && decoder))
      diags.warning(a->loc, "share_embeddings has no effect without both an "
                            "encoder and a decoder");
    if (const ast::Assignment *a = key("kv_cache"); a && !decoder)
      diags.warning(a->loc, "kv_cache has no effect without a decoder",
                    "an encoder attends to its whole input at once and keeps no key/value "
                    "cache");
    if (const ast::Assignment *a = key("segments"); a && spec.segments > 0 && !encoder)
      diags.error(a->value->loc, "segments needs an encoder: a decoder-only model has no "
                                 "token types",
                  "segment (token-type) embeddings are added to the encoder's input; "
                  "remove segments or add an encoder block");
    // Position 0 of a causal decoder has seen only itself.
    if (spec.output == OutputKind::Classifier && spec.pool == Pooling::First && !encoder &&
        spec.decoder.mask.has(MaskKind::Causal))
      diags.warning(spec.outputLoc,
                    "pool = first reads position 0, which a causal decoder lets see "
                    "only itself",
                    "use classifier(classes = " + Twine(spec.classes) +
                        ", pool = mean), or an encoder");
  }

  /// The sizes `tmc check` reports must fit in 64 bits.
  void checkTotals() {
    std::string overflow;
    if (!computeSizes(spec, &overflow))
      diags.error(model.loc,
                  "model '" + model.name + "' is too large: " + overflow +
                      " does not fit in 64 bits",
                  "reduce layers, d_model, d_ff, vocab or max_seq");
  }

  const ast::Model &model;
  DiagnosticEngine &diags;
  const SpecOverrides &overrides;
  ValueReader reader;
  KeyMap keys;
  ModelSpec spec;
};

} // namespace

std::optional<ModelSpec> analyze(const ast::Model &model,
                                 DiagnosticEngine &diags,
                                 const SpecOverrides &overrides) {
  return ModelChecker(model, diags, overrides).check();
}

} // namespace tmc
