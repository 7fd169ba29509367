//===- Sema.cpp - Model-level keys and the stacks they hold ---------------===//

#include "frontend/Sema.h"

#include "frontend/SemaValues.h"

using namespace llvm;

namespace tmc {

using namespace sema;

ArrayRef<StringRef> modelKeys() {
  static const StringRef keys[] = {
      "vocab",      "d_model",  "max_seq",          "position", "embed_scale",
      "embed_norm", "segments", "share_embeddings", "output",   "dtype"};
  return keys;
}

namespace {

class ModelChecker {
public:
  ModelChecker(const ast::Model &model, DiagnosticEngine &diags)
      : model(model), diags(diags), reader(diags) {}

  std::optional<ModelSpec> check() {
    unsigned errorsBefore = diags.errorCount();
    spec.name = model.name;
    spec.loc = model.loc;
    keys = reader.collectKeys(model.assignments, "model", modelKeys(),
                              stackKeys(), "inside encoder { } or decoder { }");
    checkSizes();
    checkPosition();
    checkEmbedding();
    checkOutput();
    checkDType();
    checkStacks();
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
    static const StringRef classifierArgs[] = {"classes", "pool"};
    const Choice choices[] = {
        {"hidden"},
        {"lm_head", lmArgs},
        {"classifier", classifierArgs,
         ArrayRef<StringRef>(classifierArgs).take_front()}};
    std::optional<Chosen> chosen = reader.choose(*a->value, "output", choices);
    if (!chosen)
      return;
    bool valid = true;
    for (StringRef flag : {"tied", "bias"})
      if (const ast::Value *value = chosen->arg(flag))
        valid &= reader.boolean(*value, flag).has_value();
    if (const ast::Value *value = chosen->arg("classes"))
      valid &= reader.integer(*value, "classes", 1).has_value();
    if (const ast::Value *value = chosen->arg("pool")) {
      const Choice pools[] = {{"first"}, {"mean"}};
      valid &= reader.choose(*value, "pool", pools).has_value();
    }
    const OutputKind kinds[] = {OutputKind::Hidden, OutputKind::LMHead,
                                OutputKind::Classifier};
    spec.output = kinds[chosen->index];
    if (valid && spec.output != OutputKind::Hidden)
      diags.error(a->value->loc,
                  "output = " + choices[chosen->index].name + kNotSupported);
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
    if (spec.dtype != DType::F32)
      diags.error(a->value->loc,
                  "dtype = " + choices[chosen->index].name + kNotSupported);
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
    if (encoder) {
      StackContext context;
      checkStack(reader, *encoder, spec, context, spec.encoder);
    }
    if (decoder) {
      diags.error(decoder->loc, "decoder { }" + Twine(kNotSupported),
                  "this version compiles encoder-only models");
      StackContext context;
      context.isDecoder = true;
      context.hasEncoder = encoder != nullptr;
      context.reportUnsupported = false;
      checkStack(reader, *decoder, spec, context, spec.decoder);
    }
    if (const ast::Assignment *a = key("share_embeddings");
        a && !(encoder && decoder))
      diags.warning(a->loc, "share_embeddings has no effect without both an "
                            "encoder and a decoder");
  }

  const ast::Model &model;
  DiagnosticEngine &diags;
  ValueReader reader;
  KeyMap keys;
  ModelSpec spec;
};

} // namespace

std::optional<ModelSpec> analyze(const ast::Model &model,
                                 DiagnosticEngine &diags) {
  return ModelChecker(model, diags).check();
}

} // namespace tmc
