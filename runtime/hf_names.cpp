//===- hf_names.cpp - Hugging Face naming schemes ---------------------------===//
//
// The tables follow the module names of Hugging Face's modeling_gpt2.py,
// modeling_bert.py and modeling_llama.py (whose layout Mistral and Qwen2
// share), as save_pretrained writes them into state-dict keys.
//
//===----------------------------------------------------------------------===//

#include "runtime/hf_names.h"

#include <charconv>
#include <map>

namespace tmr::hf {

namespace {

/// A canonical name split at its layer: "decoder.layers.3.norm1.weight" is
/// stack "decoder", layer 3, rest "norm1.weight"; a name outside the layers
/// has layer -1 and rest the whole name.
struct CanonicalName {
  std::string_view stack;
  int layer = -1;
  std::string_view rest;
};

CanonicalName split(std::string_view name) {
  CanonicalName parts{{}, -1, name};
  for (std::string_view stack : {"encoder", "decoder"}) {
    std::string prefix = std::string(stack) + ".layers.";
    if (name.substr(0, prefix.size()) != prefix)
      continue;
    std::string_view tail = name.substr(prefix.size());
    size_t dot = tail.find('.');
    int layer = 0;
    auto [end, ec] = std::from_chars(tail.data(), tail.data() + tail.size(), layer);
    if (dot == std::string_view::npos || ec != std::errc() || end != tail.data() + dot)
      return parts;
    return {stack, layer, tail.substr(dot + 1)};
  }
  return parts;
}

Source named(std::string name) { return Source{{std::move(name)}}; }

/// `weight`/`bias` of a LayerNorm, with BERT's old `gamma`/`beta` spellings.
Source layerNorm(const std::string &module, std::string_view param) {
  return param == "weight" ? Source{{module + ".weight", module + ".gamma"}}
                           : Source{{module + ".bias", module + ".beta"}};
}

/// "self_attn.q.weight" -> ("self_attn.q", "weight").
std::pair<std::string_view, std::string_view> moduleAndParam(std::string_view rest) {
  size_t dot = rest.rfind('.');
  if (dot == std::string_view::npos)
    return {rest, {}};
  return {rest.substr(0, dot), rest.substr(dot + 1)};
}

bool endsWith(std::string_view text, std::string_view tail) {
  return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

/// "h.3.attn.bias" with the layer's number dropped: "h.*.attn.bias".
std::string withoutLayer(std::string_view name, std::string_view layers) {
  if (name.substr(0, layers.size()) != layers)
    return std::string(name);
  std::string_view tail = name.substr(layers.size());
  size_t dot = tail.find('.');
  if (dot == std::string_view::npos)
    return std::string(name);
  return std::string(layers) + "*" + std::string(tail.substr(dot));
}

// --- GPT-2 (GPT2LMHeadModel, GPT2Model) -------------------------------------

std::optional<Source> gpt2Source(std::string_view name) {
  CanonicalName n = split(name);
  if (n.layer < 0) {
    static const std::map<std::string_view, std::string, std::less<>> top = {
        {"embed.tokens", "wte.weight"},
        {"embed.positions", "wpe.weight"},
        {"decoder.final_norm.weight", "ln_f.weight"},
        {"decoder.final_norm.bias", "ln_f.bias"}};
    if (name == "output.weight")
      return Source{{"lm_head.weight"}, /*prefixed=*/false};
    auto it = top.find(name);
    if (it == top.end())
      return std::nullopt;
    Source source = named(it->second);
    source.leadingRows = name == "embed.positions";
    return source;
  }
  if (n.stack != "decoder")
    return std::nullopt;
  const std::string layer = "h." + std::to_string(n.layer) + ".";
  auto [module, param] = moduleAndParam(n.rest);
  static const std::map<std::string_view, std::string_view, std::less<>> modules = {
      {"norm1", "ln_1"},
      {"norm2", "ln_2"},
      {"self_attn.o", "attn.c_proj"},
      {"ffn.up", "mlp.c_fc"},
      {"ffn.down", "mlp.c_proj"}};
  // q, k and v are thirds of one Conv1D, c_attn: [d_model, 3 d_model].
  static const std::string_view qkv[] = {"self_attn.q", "self_attn.k", "self_attn.v"};
  for (int part = 0; part < 3; ++part)
    if (module == qkv[part]) {
      Source source = named(layer + "attn.c_attn." + std::string(param));
      source.transposed = param == "weight";
      source.part = part;
      source.parts = 3;
      return source;
    }
  auto it = modules.find(module);
  if (it == modules.end())
    return std::nullopt;
  Source source = named(layer + std::string(it->second) + "." + std::string(param));
  // Conv1D stores [in, out]; the norms are not matrices.
  source.transposed = param == "weight" && module != "norm1" && module != "norm2";
  return source;
}

bool gpt2Ignorable(std::string_view name, bool) {
  // The causal-mask buffers older checkpoints saved with each layer.
  std::string shape = withoutLayer(name, "h.");
  return shape == "h.*.attn.bias" || shape == "h.*.attn.masked_bias";
}

// --- BERT (BertModel, BertFor*) -------------------------------------------------

std::optional<Source> bertSource(std::string_view name) {
  CanonicalName n = split(name);
  if (n.layer < 0) {
    if (name == "embed.tokens")
      return named("embeddings.word_embeddings.weight");
    if (name == "embed.positions") {
      Source source = named("embeddings.position_embeddings.weight");
      source.leadingRows = true;
      return source;
    }
    if (name == "embed.segments")
      return named("embeddings.token_type_embeddings.weight");
    if (name == "embed.norm.weight" || name == "embed.norm.bias")
      return layerNorm("embeddings.LayerNorm", moduleAndParam(name).second);
    if (name == "classifier.weight" || name == "classifier.bias")
      return Source{{std::string(name)}, /*prefixed=*/false};
    if (name == "classifier.pooler.weight" || name == "classifier.pooler.bias")
      return named("pooler.dense." + std::string(moduleAndParam(name).second));
    return std::nullopt;
  }
  if (n.stack != "encoder")
    return std::nullopt;
  const std::string layer = "encoder.layer." + std::to_string(n.layer) + ".";
  auto [module, param] = moduleAndParam(n.rest);
  if (module == "norm1")
    return layerNorm(layer + "attention.output.LayerNorm", param);
  if (module == "norm2")
    return layerNorm(layer + "output.LayerNorm", param);
  static const std::map<std::string_view, std::string_view, std::less<>> modules = {
      {"self_attn.q", "attention.self.query"}, {"self_attn.k", "attention.self.key"},
      {"self_attn.v", "attention.self.value"}, {"self_attn.o", "attention.output.dense"},
      {"ffn.up", "intermediate.dense"},        {"ffn.down", "output.dense"}};
  auto it = modules.find(module);
  if (it == modules.end())
    return std::nullopt;
  return named(layer + std::string(it->second) + "." + std::string(param));
}

bool bertIgnorable(std::string_view name, bool modelHasClassifier) {
  if (name == "embeddings.position_ids" || name.substr(0, 4) == "cls.")
    return true; // a buffer, and BertForPreTraining's heads
  // BertModel's pooler, unused by its hidden states; under a classifier it
  // must be read (classifier(pooler = true)), never skipped.
  return !modelHasClassifier && name.substr(0, 7) == "pooler.";
}

// --- Llama, Mistral, Qwen2 (LlamaForCausalLM, ...) ------------------------------

std::optional<Source> llamaSource(std::string_view name) {
  CanonicalName n = split(name);
  if (n.layer < 0) {
    if (name == "embed.tokens")
      return named("embed_tokens.weight");
    if (name == "decoder.final_norm.weight")
      return named("norm.weight");
    if (name == "output.weight")
      return Source{{"lm_head.weight"}, /*prefixed=*/false};
    return std::nullopt;
  }
  if (n.stack != "decoder")
    return std::nullopt;
  const std::string layer = "layers." + std::to_string(n.layer) + ".";
  auto [module, param] = moduleAndParam(n.rest);
  static const std::map<std::string_view, std::string_view, std::less<>> modules = {
      {"self_attn.q", "self_attn.q_proj"}, {"self_attn.k", "self_attn.k_proj"},
      {"self_attn.v", "self_attn.v_proj"}, {"self_attn.o", "self_attn.o_proj"},
      {"norm1", "input_layernorm"},        {"norm2", "post_attention_layernorm"},
      {"ffn.gate", "mlp.gate_proj"},       {"ffn.up", "mlp.up_proj"},
      {"ffn.down", "mlp.down_proj"}};
  auto it = modules.find(module);
  if (it == modules.end())
    return std::nullopt;
  Source source = named(layer + std::string(it->second) + "." + std::string(param));
  // attention_bias and mlp_bias put biases on some linears, Qwen2 on q, k
  // and v only: a spec with bias = true reads zeros for the others.
  source.zerosIfAbsent = param == "bias" && module != "norm1" && module != "norm2";
  return source;
}

bool llamaIgnorable(std::string_view name, bool) { return endsWith(name, ".rotary_emb.inv_freq"); }

const Family kFamilies[] = {
    {"gpt2", "transformer.", gpt2Source, gpt2Ignorable, "wte.weight"},
    {"bert", "bert.", bertSource, bertIgnorable, "embeddings.word_embeddings.weight"},
    {"llama", "model.", llamaSource, llamaIgnorable, "embed_tokens.weight"},
};

} // namespace

const Family *findFamily(std::string_view name) {
  for (const Family &family : kFamilies)
    if (name == family.name)
      return &family;
  return nullptr;
}

} // namespace tmr::hf
