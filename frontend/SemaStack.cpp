//===- SemaStack.cpp - Keys of encoder { } / decoder { } blocks -----------===//
//
// A stack's keys are read once, and a `layers A..B { }` block's keys are read
// onto a copy of the stack's values as written. The defaults that depend on
// other keys (kv_heads = heads, head_dim = d_model / heads, d_ff = 4 *
// d_model, a decoder's causal mask) and the rules that relate keys are then
// applied per layer (resolveLayer), so that an override which changes `heads`
// gets its own head_dim and its own divisibility check.
//
//===----------------------------------------------------------------------===//

#include "frontend/Sema.h"

#include "frontend/MaskAnalysis.h"
#include "frontend/SemaMask.h"
#include "frontend/SemaValues.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace tmc {

using namespace sema;

ArrayRef<StringRef> stackKeys() {
  static const StringRef keys[] = {
      "layers",     "heads", "kv_heads", "head_dim",        "d_ff",      "ffn",       "norm",
      "final_norm", "bias",  "mask",     "cross_attention", "attention", "precision", "kv_cache"};
  return keys;
}

ArrayRef<StringRef> layerKeys() {
  static const StringRef keys[] = {"heads", "kv_heads", "head_dim",  "d_ff",      "ffn",     "norm",
                                   "bias",  "mask",     "attention", "precision", "kv_cache"};
  return keys;
}

namespace {

/// The keys that hold for one layer: those of its `layers A..B { }` block,
/// if any, over those of the stack block.
struct LayerKeys {
  const KeyMap &stack;
  const KeyMap *override = nullptr;
  SMLoc blockLoc; ///< of the block the layer's keys come from
  /// For the stack's own values: its `layers A..B { }` blocks, and its layer
  /// count (concerns()).
  ArrayRef<ast::LayerOverride> overrides = {};
  int64_t layers = 0;

  const ast::Assignment *get(StringRef key) const {
    if (override)
      if (const ast::Assignment *a = override->lookup(key))
        return a;
    return stack.lookup(key);
  }
  bool given(StringRef key) const { return get(key) != nullptr; }
  bool fromOverride(StringRef key) const { return override && override->count(key); }
  /// Whether a rule over `keys` needs checking: for an override only when it
  /// sets one of them, because the stack's check already covered the rest;
  /// for the stack's own values unless every layer's block sets one of them,
  /// so that no layer takes them all from the stack (a stack whose heads do
  /// not divide d_model, where every layer's block sets head_dim).
  bool concerns(std::initializer_list<StringRef> keys) const {
    if (override)
      return any_of(keys, [&](StringRef key) { return fromOverride(key); });
    return !everyLayerSetsOneOf(keys);
  }

private:
  bool everyLayerSetsOneOf(std::initializer_list<StringRef> keys) const {
    SmallVector<std::pair<int64_t, int64_t>, 4> ranges;
    for (const ast::LayerOverride &o : overrides)
      if (o.first >= 0 && o.first <= o.last && any_of(o.assignments, [&](const ast::Assignment &a) {
            return is_contained(keys, StringRef(a.key));
          }))
        ranges.emplace_back(o.first, o.last);
    llvm::sort(ranges);
    int64_t next = 0; // the first layer no range so far covers
    for (auto [first, last] : ranges) {
      if (first > next)
        break;
      next = std::max(next, last + 1);
    }
    return layers > 0 && next >= layers;
  }
};

class StackChecker {
public:
  StackChecker(ValueReader &reader, const ast::Stack &stack, const ModelSpec &model,
               const StackContext &context)
      : reader(reader), diags(reader.diagnostics()), stack(stack), model(model),
        context(context) {}

  void check(StackSpec &out);

private:
  void applyStackKey(const ast::Assignment &a, StackSpec &out);
  void applyLayerKey(const ast::Assignment &a, LayerSpec &out);
  void readNorm(const ast::Value &value, LayerSpec &out);
  void readAttention(const ast::Value &value, LayerSpec &out);
  void resolveLayer(LayerSpec &layer, const LayerKeys &keys);
  void checkLinformer(const LayerSpec &layer, const LayerKeys &keys);
  /// After an error about two keys, points at the one the stack set when the
  /// layer's override set the other.
  void noteStackKey(const LayerKeys &keys, StringRef key);
  void checkOverrides(const LayerSpec &written, StackSpec &out);
  void checkFinalNorm(const StackSpec &out);

  ValueReader &reader;
  DiagnosticEngine &diags;
  const ast::Stack &stack;
  const ModelSpec &model;
  const StackContext &context;
  KeyMap keys;
  /// The `norm` assignment that decides the last layer's placement.
  const ast::Assignment *lastNorm = nullptr;
  bool lastNormFromOverride = false;
};

void StackChecker::check(StackSpec &out) {
  out.present = true;
  out.loc = stack.loc;
  out.norm.loc = stack.loc;
  out.crossAttention = context.isDecoder && context.hasEncoder;
  // Inherited from the model (after --precision) unless the block sets it.
  out.precision = model.precision;
  out.precisionLoc = model.precisionLoc;
  // Only a decoder keeps caches; an encoder's layers stay f32 whatever the model says.
  if (context.isDecoder) {
    out.kvCache = model.kvCache;
    out.kvCacheLoc = model.kvCacheLoc;
  }
  const Misplaced elsewhere[] = {
      {modelKeys(), "at model level, outside the " + stack.kind + " block"}};
  keys = reader.collectKeys(stack.assignments, stack.kind, stackKeys(), elsewhere);
  for (const ast::Assignment &assignment : stack.assignments)
    if (keys.lookup(assignment.key) == &assignment)
      applyStackKey(assignment, out);
  for (StringRef required : {"layers", "heads"})
    if (!keys.count(required) && !reader.wasSuggested(required))
      diags.error(stack.loc,
                  "missing required key '" + Twine(required) + "' in the " + stack.kind +
                      " block",
                  "add " + Twine(required) + " = ... to the " + stack.kind + " block");

  LayerSpec written = out;
  resolveLayer(out, LayerKeys{keys, nullptr, stack.loc, stack.overrides, out.layers});
  lastNorm = keys.lookup("norm");
  if (out.layers > 0)
    out.layerSpecs.assign(static_cast<size_t>(out.layers), static_cast<const LayerSpec &>(out));
  checkOverrides(written, out);
  checkFinalNorm(out);
}

void StackChecker::applyStackKey(const ast::Assignment &a, StackSpec &out) {
  StringRef key = a.key;
  const ast::Value &value = *a.value;
  if (key == "layers") {
    if (std::optional<int64_t> n = reader.integer(value, key, 1, kMaxLayers))
      out.layers = *n;
  } else if (key == "final_norm") {
    bool isNone;
    out.finalNorm = reader.norm(value, key, /*allowNone=*/true, isNone);
  } else if (key == "cross_attention") {
    std::optional<bool> b = reader.boolean(value, key);
    if (!b)
      return;
    if (*b && !context.isDecoder && context.hasDecoder)
      diags.error(value.loc, "cross_attention = true is only valid in the decoder block",
                  "the decoder of an encoder-decoder model attends to the encoder's "
                  "output; the encoder has nothing to attend to");
    else if (*b && !(context.isDecoder && context.hasEncoder))
      diags.error(value.loc, "cross_attention = true needs an encoder-decoder model",
                  "only a decoder next to an encoder block has an encoder "
                  "output to attend to");
    else if (!*b && context.isDecoder && context.hasEncoder)
      diags.warning(value.loc,
                    "with cross_attention = false, the decoder never reads the "
                    "encoder's output",
                    "remove the encoder block for a decoder-only model");
    out.crossAttention = *b;
  } else {
    applyLayerKey(a, out);
  }
}

void StackChecker::applyLayerKey(const ast::Assignment &a, LayerSpec &out) {
  StringRef key = a.key;
  const ast::Value &value = *a.value;
  auto setInt = [&](int64_t &field) {
    if (std::optional<int64_t> n = reader.integer(value, key, 1))
      field = *n;
  };
  if (key == "heads") {
    setInt(out.heads);
  } else if (key == "kv_heads") {
    setInt(out.kvHeads);
  } else if (key == "head_dim") {
    setInt(out.headDim);
  } else if (key == "d_ff") {
    setInt(out.dFF);
  } else if (key == "ffn") {
    const Choice choices[] = {{"relu"}, {"gelu"},   {"gelu_tanh"},
                              {"silu"}, {"swiglu"}, {"geglu"}};
    const Activation kinds[] = {Activation::Relu,     Activation::Gelu,
                                Activation::GeluTanh, Activation::Silu,
                                Activation::SwiGLU,   Activation::GeGLU};
    out.ffnLoc = a.loc;
    if (std::optional<Chosen> chosen = reader.choose(value, key, choices))
      out.ffn = kinds[chosen->index];
  } else if (key == "norm") {
    out.normLoc = a.loc;
    readNorm(value, out);
  } else if (key == "bias") {
    if (std::optional<bool> b = reader.boolean(value, key))
      out.bias = *b;
  } else if (key == "mask") {
    out.maskLoc = a.loc;
    if (std::optional<MaskSpec> mask =
            readMask(reader, value, model.maxSeq, context.isDecoder))
      out.mask = std::move(*mask);
  } else if (key == "attention") {
    out.attentionLoc = a.loc;
    readAttention(value, out);
  } else if (key == "precision") {
    out.precisionLoc = a.loc;
    if (std::optional<Precision> precision = reader.precision(value, key))
      out.precision = *precision;
  } else if (key == "kv_cache") {
    std::optional<CachePrecision> kv = reader.cachePrecision(value, key);
    if (kv && !context.isDecoder)
      diags.error(a.loc,
                  "kv_cache applies to a decoder's layers: an encoder keeps no key/value cache",
                  "set kv_cache in the decoder block or at model level");
    else if (kv) {
      out.kvCacheLoc = a.loc;
      out.kvCache = *kv;
    }
  }
}

/// linformer's k when the spec gives none.
constexpr int64_t kDefaultLinformerK = 256;

void StackChecker::readAttention(const ast::Value &value, LayerSpec &out) {
  static const StringRef k[] = {"k"};
  const Choice choices[] = {{"full"}, {"linformer", k}};
  std::optional<Chosen> chosen = reader.choose(value, "attention", choices);
  if (!chosen)
    return;
  if (chosen->index == 0) {
    out.attention = AttentionKind::Full;
    return;
  }
  // k defaults to 256 (the contract's `linformer(k = 256)`, the Linformer
  // paper's), as rope's theta and a norm's eps default.
  const ast::Value *kValue = chosen->arg("k");
  std::optional<int64_t> rows = kValue ? reader.integer(*kValue, "k", 1) : kDefaultLinformerK;
  if (!rows)
    return;
  if (model.maxSeq > 0 && *rows > model.maxSeq) {
    diags.error(kValue ? kValue->loc : value.loc,
                "linformer k (" + Twine(*rows) + (kValue ? "" : ", the default") +
                    ") is larger than max_seq (" + Twine(model.maxSeq) + ")",
                "linformer projects at most max_seq keys down to k rows; use k = " +
                    Twine(model.maxSeq) + " or less");
    return;
  }
  out.attention = AttentionKind::Linformer;
  out.linformerK = *rows;
}

void StackChecker::readNorm(const ast::Value &value, LayerSpec &out) {
  // A bare norm is a likely slip: say what is missing rather than listing.
  if ((value.kind == ast::Value::Kind::Name || value.kind == ast::Value::Kind::Call) &&
      (value.name == "layernorm" || value.name == "rmsnorm")) {
    diags.error(value.loc,
                "expected post(...) or pre(...) around '" + value.name + "' for 'norm'",
                "write norm = post(" + value.name + "(eps = 1e-5)) or norm = pre(" +
                    value.name + "(eps = 1e-5))");
    return;
  }
  const Choice choices[] = {{"post", {}, {}, true}, {"pre", {}, {}, true}};
  std::optional<Chosen> chosen = reader.choose(value, "norm", choices);
  if (!chosen)
    return;
  NormSpec norm;
  norm.loc = value.loc;
  if (chosen->positional) {
    bool isNone;
    std::optional<NormSpec> inner =
        reader.norm(*chosen->positional, "norm", /*allowNone=*/false, isNone);
    if (!inner)
      return;
    norm = *inner;
  }
  out.placement = chosen->index == 0 ? NormPlacement::Post : NormPlacement::Pre;
  out.norm = norm;
}

void StackChecker::noteStackKey(const LayerKeys &keys, StringRef key) {
  if (keys.override && !keys.fromOverride(key))
    if (const ast::Assignment *a = keys.stack.lookup(key))
      diags.note(a->loc, "'" + key + "' is set for the whole " + stack.kind + " here");
}

void StackChecker::resolveLayer(LayerSpec &layer, const LayerKeys &keys) {
  auto valueLoc = [&](StringRef key) {
    const ast::Assignment *a = keys.get(key);
    return a ? a->value->loc : keys.blockLoc;
  };
  if (layer.heads > 0) {
    if (!keys.given("kv_heads")) {
      layer.kvHeads = layer.heads;
    } else if (layer.kvHeads > 0 && layer.heads % layer.kvHeads != 0 &&
               keys.concerns({"heads", "kv_heads"})) {
      bool atHeads = keys.fromOverride("heads") && !keys.fromOverride("kv_heads");
      diags.error(valueLoc(atHeads ? "heads" : "kv_heads"),
                  "kv_heads (" + Twine(layer.kvHeads) + ") must divide heads (" +
                      Twine(layer.heads) + ")",
                  "grouped-query attention shares each kv head among heads / kv_heads "
                  "query heads");
      noteStackKey(keys, atHeads ? "kv_heads" : "heads");
    }
    if (!keys.given("head_dim") && model.dModel > 0) {
      if (model.dModel % layer.heads == 0)
        layer.headDim = model.dModel / layer.heads;
      else if (keys.concerns({"heads", "head_dim"}))
        diags.error(valueLoc("heads"),
                    "heads (" + Twine(layer.heads) + ") must divide d_model (" +
                        Twine(model.dModel) + ")",
                    "choose heads that divide d_model, or set head_dim");
    }
    if (layer.headDim > 0 && layer.heads > kMaxDim / layer.headDim &&
        keys.concerns({"heads", "head_dim"}))
      diags.error(valueLoc(keys.given("head_dim") ? "head_dim" : "heads"),
                  "heads * head_dim (" + Twine(layer.heads * layer.headDim) +
                      ") is larger than the widest supported layer (" + Twine(kMaxDim) +
                      ")");
  }
  if (!keys.given("d_ff") && model.dModel > 0)
    layer.dFF = 4 * model.dModel; // d_model <= kMaxDim, so this cannot overflow

  if (model.position == PositionKind::Rope && layer.headDim > 0 && layer.headDim % 2 &&
      keys.concerns({"heads", "head_dim"}))
    diags.error(valueLoc(keys.given("head_dim") ? "head_dim" : "heads"),
                "position = rope needs an even head_dim, found " + Twine(layer.headDim),
                "rope rotates pairs of dimensions (i, i + head_dim / 2)");

  // ALiBi biases each score by its key's position; linformer's projected
  // keys are mixtures of positions and have none.
  if (model.position == PositionKind::Alibi && layer.attention == AttentionKind::Linformer &&
      keys.concerns({"attention"}))
    diags.error(keys.get("attention")->value->loc,
                "attention = linformer cannot be combined with position = alibi",
                "alibi biases scores by key position, and linformer's projected keys have "
                "none; use rope, sinusoidal, learned or no positions, or full attention");

  // A decoder's linformer projects its cached keys and values with a kernel
  // that reads f32 rows.
  if (context.isDecoder && layer.attention == AttentionKind::Linformer &&
      layer.kvCache != CachePrecision::F32 && keys.concerns({"attention", "kv_cache"})) {
    diags.error(keys.get("attention")->value->loc,
                "attention = linformer cannot be combined with kv_cache = " +
                    Twine(toString(layer.kvCache)) + " yet",
                "a linformer layer's caches stay f32: write kv_cache = f32 in this block");
    if (layer.kvCacheLoc.isValid())
      diags.note(layer.kvCacheLoc, "kv_cache set here");
  }

  if (!layer.attentionLoc.isValid())
    layer.attentionLoc = keys.given("heads") ? keys.get("heads")->loc : keys.blockLoc;
  if (!layer.ffnLoc.isValid())
    layer.ffnLoc = keys.given("d_ff") ? keys.get("d_ff")->loc : keys.blockLoc;
  if (!layer.normLoc.isValid())
    layer.normLoc = keys.blockLoc;

  if (!keys.given("mask")) {
    layer.mask = MaskSpec();
    layer.mask.loc = stack.loc;
    if (context.isDecoder) {
      MaskTerm causal;
      causal.loc = stack.loc;
      layer.mask.terms.push_back(causal);
    }
  }
  if (layer.attention == AttentionKind::Linformer && keys.concerns({"attention", "mask"}) &&
      any_of(layer.mask.terms,
             [](const MaskTerm &term) { return term.kind != MaskKind::Padding; })) {
    checkLinformer(layer, keys);
    return;
  }
  // A mask that failed to read has no location; its errors are reported.
  if (keys.concerns({"mask"}) && layer.mask.loc.isValid())
    checkLayerMask(reader, layer.mask, keys.given("mask"), model.maxSeq, context.isDecoder,
                   layer.attention == AttentionKind::Linformer);
}

void StackChecker::checkLinformer(const LayerSpec &layer, const LayerKeys &keys) {
  std::string hint = "linformer projects the keys along the sequence down to k rows, so "
                     "no key position is left to mask; use mask = none or mask = padding";
  if (!keys.given("mask")) {
    diags.error(keys.get("attention")->value->loc,
                "attention = linformer cannot be used with the decoder's default mask "
                "(causal)",
                hint + " in this block");
    return;
  }
  const MaskTerm *term = &*find_if(layer.mask.terms, [](const MaskTerm &t) {
    return t.kind != MaskKind::Padding;
  });
  bool atMask = keys.fromOverride("mask") && !keys.fromOverride("attention");
  diags.error(atMask ? term->loc : keys.get("attention")->value->loc,
              "attention = linformer cannot be combined with a '" +
                  Twine(toString(term->kind)) + "' mask",
              hint);
  noteStackKey(keys, atMask ? "attention" : "mask");
}

void StackChecker::checkOverrides(const LayerSpec &written, StackSpec &out) {
  static const StringRef stackOnly[] = {"layers", "final_norm", "cross_attention"};
  const Misplaced misplaced[] = {
      {stackOnly, "directly in the " + stack.kind + " block: a layer range cannot change it"},
      {modelKeys(), "at model level, outside the " + stack.kind + " block"}};

  SmallVector<const ast::LayerOverride *, 4> accepted;
  for (const ast::LayerOverride &override : stack.overrides) {
    std::string range = std::to_string(override.first) + ".." + std::to_string(override.last);
    bool valid = false;
    if (override.first < 0) {
      diags.error(override.rangeLoc, "layer range " + range + " starts before layer 0");
    } else if (override.first > override.last) {
      diags.error(override.rangeLoc, "layer range " + range +
                                         " is empty: its first layer comes after its last");
    } else if (out.layers > 0 && override.last >= out.layers) {
      diags.error(override.rangeLoc, "layer range " + range + " is outside the " +
                                         stack.kind + "'s layers 0.." +
                                         Twine(out.layers - 1) + " (layers = " +
                                         Twine(out.layers) + ")");
    } else if (const ast::LayerOverride *const *other =
                   find_if(accepted,
                           [&](const ast::LayerOverride *o) {
                             return o->first <= override.last && override.first <= o->last;
                           });
               other != accepted.end()) {
      diags.error(override.rangeLoc, "layer range " + range + " overlaps " +
                                         Twine((*other)->first) + ".." +
                                         Twine((*other)->last),
                  "a layer takes its keys from one range only");
      diags.note((*other)->rangeLoc, "the other range is here");
    } else {
      accepted.push_back(&override);
      valid = true;
    }
    if (override.assignments.empty())
      diags.warning(override.loc, "layers " + range + " { } changes nothing",
                    "add the keys these layers change, e.g. ffn = gelu");

    unsigned errorsBefore = diags.errorCount();
    KeyMap overrideKeys =
        reader.collectKeys(override.assignments, "layers " + range, layerKeys(), misplaced);
    LayerSpec layer = written;
    for (const ast::Assignment &assignment : override.assignments)
      if (overrideKeys.lookup(assignment.key) == &assignment)
        applyLayerKey(assignment, layer);
    // A key that failed to read keeps the stack's value, which the rules
    // below would then check a second time.
    if (!valid || diags.errorCount() != errorsBefore)
      continue;
    resolveLayer(layer, LayerKeys{keys, &overrideKeys, override.loc});
    if (diags.errorCount() != errorsBefore)
      continue;
    for (int64_t i = override.first; i <= override.last && i < out.layers; ++i)
      out.layerSpecs[static_cast<size_t>(i)] = layer;
    if (override.last == out.layers - 1 && overrideKeys.count("norm")) {
      lastNorm = overrideKeys.lookup("norm");
      lastNormFromOverride = true;
    }
  }
}

void StackChecker::checkFinalNorm(const StackSpec &out) {
  const LayerSpec &last =
      out.layerSpecs.empty() ? static_cast<const LayerSpec &>(out) : out.layerSpecs.back();
  if (last.placement != NormPlacement::Pre || keys.count("final_norm") || !lastNorm)
    return;
  diags.error(lastNorm->value->loc,
              lastNormFromOverride ? "a stack whose last layer is pre-norm needs final_norm"
                                   : "a pre-norm stack needs final_norm",
              "add final_norm = " + Twine(toString(last.norm.kind)) +
                  "(eps = " + formatFloat(last.norm.eps) + ") to the " + stack.kind +
                  " block, or final_norm = none");
}

} // namespace

namespace sema {
void checkStack(ValueReader &reader, const ast::Stack &stack, const ModelSpec &model,
                const StackContext &context, StackSpec &out) {
  StackChecker(reader, stack, model, context).check(out);
}
} // namespace sema

} // namespace tmc
