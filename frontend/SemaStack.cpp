//===- SemaStack.cpp - Keys of encoder { } / decoder { } blocks -----------===//
//
// Each key is first checked on its own (applyKey), which is all a layer-range
// override needs; the checks that relate keys to each other and to the model
// (divisibility, defaults, pre-norm needing final_norm) run once per stack.
//
//===----------------------------------------------------------------------===//

#include "frontend/Sema.h"

#include "frontend/SemaValues.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace llvm;

namespace tmc {

using namespace sema;

ArrayRef<StringRef> stackKeys() {
  static const StringRef keys[] = {"layers",
                                   "heads",
                                   "kv_heads",
                                   "head_dim",
                                   "d_ff",
                                   "ffn",
                                   "norm",
                                   "final_norm",
                                   "bias",
                                   "mask",
                                   "cross_attention",
                                   "attention"};
  return keys;
}

namespace {

class StackChecker {
public:
  StackChecker(ValueReader &reader, const ast::Stack &stack,
               const ModelSpec &model, const StackContext &context)
      : reader(reader), diags(reader.diagnostics()), stack(stack), model(model),
        context(context) {}

  void check(StackSpec &out) {
    out.present = true;
    out.loc = stack.loc;
    out.norm.loc = stack.loc;
    out.crossAttention = context.isDecoder && context.hasEncoder;
    KeyMap keys = reader.collectKeys(
        stack.assignments, stack.kind, stackKeys(), modelKeys(),
        "at model level, outside the " + stack.kind + " block");
    for (const ast::Assignment &assignment : stack.assignments)
      if (keys.lookup(assignment.key) == &assignment)
        applyKey(assignment, out, context.reportUnsupported);
    relateKeys(keys, out);
    checkOverrides(out);
    // Until layer overrides are applied, every layer is the stack's base.
    if (out.layers > 0)
      out.layerSpecs.assign(static_cast<size_t>(out.layers), static_cast<const LayerSpec &>(out));
  }

private:
  void applyKey(const ast::Assignment &a, StackSpec &out,
                bool reportUnsupported);
  void relateKeys(const KeyMap &keys, StackSpec &out);
  void checkOverrides(const StackSpec &out);
  void checkNorm(const ast::Value &value, StackSpec &out);
  void checkMask(const ast::Value &value, bool reportUnsupported);
  bool checkMaskArguments(const Chosen &chosen);

  ValueReader &reader;
  DiagnosticEngine &diags;
  const ast::Stack &stack;
  const ModelSpec &model;
  const StackContext &context;
};

void StackChecker::applyKey(const ast::Assignment &a, StackSpec &out,
                            bool reportUnsupported) {
  StringRef key = a.key;
  const ast::Value &value = *a.value;
  auto setInt = [&](int64_t &field) {
    if (std::optional<int64_t> n = reader.integer(value, key, 1))
      field = *n;
  };
  if (key == "layers") {
    setInt(out.layers);
  } else if (key == "heads") {
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
    checkNorm(value, out);
  } else if (key == "final_norm") {
    bool isNone;
    out.finalNorm = reader.norm(value, key, /*allowNone=*/true, isNone);
  } else if (key == "bias") {
    if (std::optional<bool> b = reader.boolean(value, key))
      out.bias = *b;
  } else if (key == "mask") {
    checkMask(value, reportUnsupported);
  } else if (key == "cross_attention") {
    std::optional<bool> b = reader.boolean(value, key);
    if (!b)
      return;
    if (*b && !(context.isDecoder && context.hasEncoder))
      diags.error(value.loc,
                  "cross_attention = true needs an encoder-decoder model",
                  "only a decoder next to an encoder block has an encoder "
                  "output to attend to");
    out.crossAttention = *b;
  } else if (key == "attention") {
    out.attentionLoc = a.loc;
    static const StringRef k[] = {"k"};
    const Choice choices[] = {{"full"}, {"linformer", k, k}};
    std::optional<Chosen> chosen = reader.choose(value, key, choices);
    if (!chosen || chosen->index == 0)
      return;
    if (reader.integer(*chosen->arg("k"), "k", 1) && reportUnsupported)
      diags.error(value.loc, "attention = linformer" + Twine(kNotSupported));
  }
}

void StackChecker::checkNorm(const ast::Value &value, StackSpec &out) {
  // A bare norm is a likely slip: say what is missing rather than listing.
  if ((value.kind == ast::Value::Kind::Name ||
       value.kind == ast::Value::Kind::Call) &&
      (value.name == "layernorm" || value.name == "rmsnorm")) {
    diags.error(
        value.loc,
        "expected post(...) or pre(...) around '" + value.name + "' for 'norm'",
        "write norm = post(" + value.name + "(eps = 1e-5)) or norm = pre(" +
            value.name + "(eps = 1e-5))");
    return;
  }
  const Choice choices[] = {{"post", {}, {}, true}, {"pre", {}, {}, true}};
  std::optional<Chosen> chosen = reader.choose(value, "norm", choices);
  if (!chosen)
    return;
  out.placement = chosen->index == 0 ? NormPlacement::Post : NormPlacement::Pre;
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
  out.norm = norm;
}

bool StackChecker::checkMaskArguments(const Chosen &chosen) {
  bool ok = true;
  for (const ast::Argument *arg : chosen.args) {
    const ast::Value &value = *arg->value;
    StringRef name = arg->name;
    if (name == "seed") {
      ok &= reader.integer(value, name, 0, INT64_MAX).has_value();
    } else if (name == "tokens") {
      if (value.kind != ast::Value::Kind::List) {
        diags.error(value.loc,
                    "expected a list of positions for 'tokens', found " +
                        Twine(describe(value.kind)),
                    "write tokens = [0] or tokens = [0, 1]");
        ok = false;
        continue;
      }
      int64_t last = model.maxSeq > 0 ? model.maxSeq - 1 : kMaxDim;
      for (const ast::ValuePtr &element : value.elements)
        ok &= reader.integer(*element, "tokens", 0, last).has_value();
    } else { // size, dilation, per_row, block
      ok &= reader.integer(value, name, 1).has_value();
    }
  }
  return ok;
}

void StackChecker::checkMask(const ast::Value &value, bool reportUnsupported) {
  static const StringRef size[] = {"size"};
  static const StringRef dilated[] = {"size", "dilation"};
  static const StringRef tokens[] = {"tokens"};
  static const StringRef random[] = {"per_row", "seed"};
  static const StringRef block[] = {"block"};
  const Choice masks[] = {
      {"none"},
      {"causal"},
      {"padding"},
      {"sliding_window", size, size},
      {"dilated_window", dilated, dilated},
      {"global", tokens, tokens},
      {"random", random, ArrayRef<StringRef>(random).take_front()},
      {"block_sparse", block, block}};
  SmallVector<const ast::Value *, 4> terms;
  if (value.kind == ast::Value::Kind::Sum)
    for (const ast::ValuePtr &term : value.elements)
      terms.push_back(term.get());
  else
    terms.push_back(&value);

  bool ok = true;
  SmallVector<StringRef, 4> names;
  for (const ast::Value *term : terms) {
    std::optional<Chosen> chosen = reader.choose(*term, "mask", masks);
    if (!chosen) {
      ok = false;
      continue;
    }
    ok &= checkMaskArguments(*chosen);
    if (chosen->index == 0 && terms.size() > 1) {
      diags.error(term->loc, "'none' cannot be combined with other masks");
      ok = false;
    }
    names.push_back(masks[chosen->index].name);
  }
  if (ok && reportUnsupported && !(names.size() == 1 && names[0] == "none"))
    diags.error(value.loc, "mask = " + join(names, " + ") + kNotSupported);
}

void StackChecker::relateKeys(const KeyMap &keys, StackSpec &out) {
  auto loc = [&](StringRef key) {
    const ast::Assignment *a = keys.lookup(key);
    return a ? a->value->loc : stack.loc;
  };
  for (StringRef required : {"layers", "heads"})
    if (!keys.count(required) && !reader.wasSuggested(required))
      diags.error(stack.loc,
                  "missing required key '" + Twine(required) + "' in the " +
                      stack.kind + " block",
                  "add " + Twine(required) + " = ... to the " + stack.kind +
                      " block");

  if (!out.attentionLoc.isValid())
    out.attentionLoc =
        keys.count("heads") ? keys.lookup("heads")->loc : stack.loc;
  if (!out.ffnLoc.isValid())
    out.ffnLoc = keys.count("d_ff") ? keys.lookup("d_ff")->loc : stack.loc;
  if (!out.normLoc.isValid())
    out.normLoc = stack.loc;

  if (out.heads > 0) {
    if (!keys.count("kv_heads"))
      out.kvHeads = out.heads;
    else if (out.kvHeads > 0 && out.heads % out.kvHeads != 0)
      diags.error(loc("kv_heads"), "kv_heads (" + Twine(out.kvHeads) +
                                       ") must divide heads (" +
                                       Twine(out.heads) + ")");
    if (!keys.count("head_dim") && model.dModel > 0) {
      if (model.dModel % out.heads != 0)
        diags.error(loc("heads"),
                    "heads (" + Twine(out.heads) + ") must divide d_model (" +
                        Twine(model.dModel) + ")",
                    "choose heads that divide d_model, or set head_dim");
      else
        out.headDim = model.dModel / out.heads;
    }
  }
  if (!keys.count("d_ff") && model.dModel > 0)
    out.dFF = 4 * model.dModel; // d_model <= kMaxDim, so this cannot overflow

  if (model.position == PositionKind::Rope && out.headDim > 0 &&
      out.headDim % 2)
    diags.error(loc(keys.count("head_dim") ? "head_dim" : "heads"),
                "position = rope needs an even head_dim, found " +
                    Twine(out.headDim));

  if (out.placement == NormPlacement::Pre && !keys.count("final_norm") &&
      keys.count("norm"))
    diags.error(loc("norm"), "a pre-norm stack needs final_norm",
                "add final_norm = " + Twine(toString(out.norm.kind)) +
                    "(eps = " + formatFloat(out.norm.eps) + ") to the " +
                    stack.kind + " block, or final_norm = none");
}

void StackChecker::checkOverrides(const StackSpec &out) {
  SmallVector<StringRef, 12> overridable;
  for (StringRef key : stackKeys())
    if (key != "layers")
      overridable.push_back(key);
  static const StringRef layersKey[] = {"layers"};

  SmallVector<const ast::LayerOverride *, 4> accepted;
  for (const ast::LayerOverride &override : stack.overrides) {
    unsigned errorsBefore = diags.errorCount();
    std::string range =
        std::to_string(override.first) + ".." + std::to_string(override.last);
    if (override.first < 0) {
      diags.error(override.rangeLoc,
                  "layer range " + range + " starts before layer 0");
    } else if (override.first > override.last) {
      diags.error(override.rangeLoc,
                  "layer range " + range +
                      " is empty: its first layer comes after its last");
    } else if (out.layers > 0 && override.last >= out.layers) {
      diags.error(override.rangeLoc,
                  "layer range " + range + " is outside the " + stack.kind +
                      "'s layers 0.." + Twine(out.layers - 1) +
                      " (layers = " + Twine(out.layers) + ")");
    } else {
      const ast::LayerOverride *const *other =
          find_if(accepted, [&](const ast::LayerOverride *o) {
            return o->first <= override.last && override.first <= o->last;
          });
      if (other != accepted.end()) {
        diags.error(override.rangeLoc, "layer range " + range + " overlaps " +
                                           Twine((*other)->first) + ".." +
                                           Twine((*other)->last));
        diags.note((*other)->rangeLoc, "the other range is here");
      } else {
        accepted.push_back(&override);
      }
    }

    KeyMap keys = reader.collectKeys(
        override.assignments, "layers " + range, overridable, layersKey,
        "directly in the " + stack.kind +
            " block: a layer range cannot change it");
    StackSpec scratch = out;
    for (const ast::Assignment &assignment : override.assignments)
      if (keys.lookup(assignment.key) == &assignment)
        applyKey(assignment, scratch, /*reportUnsupported=*/false);

    if (context.reportUnsupported && diags.errorCount() == errorsBefore)
      diags.error(override.loc,
                  "layers " + range + " { }" + Twine(kNotSupported),
                  "every layer of this version's stacks is the same");
  }
}

} // namespace

namespace sema {
void checkStack(ValueReader &reader, const ast::Stack &stack,
                const ModelSpec &model, const StackContext &context,
                StackSpec &out) {
  StackChecker(reader, stack, model, context).check(out);
}
} // namespace sema

} // namespace tmc
