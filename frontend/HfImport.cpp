//===- HfImport.cpp - A spec from a Hugging Face config.json --------------===//
//
// Field names and defaults are those of Hugging Face's configuration classes
// (configuration_gpt2.py, configuration_bert.py, configuration_llama.py,
// configuration_mistral.py, configuration_qwen2.py): a field a config leaves
// out has the class's default, as from_pretrained would give it.
//
//===----------------------------------------------------------------------===//

#include "frontend/HfImport.h"

#include "frontend/Frontend.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <sstream>

namespace tmc {

namespace {

using Json = nlohmann::json;

/// Hugging Face configs are a few kilobytes; a larger file is not one.
constexpr uint64_t kMaxConfigBytes = uint64_t(16) << 20;

/// The first problem found; importHuggingFace turns it into an llvm::Error.
struct ImportError {
  std::string message;
};

/// "1e-5", "1000000", "0.5": the shortest text that reads back as `value`,
/// whole numbers written out, exponents without padding.
std::string formatNumber(double value) {
  char buffer[64];
  const bool whole = value == std::floor(value) && std::fabs(value) < 1e15;
  auto [end, ec] =
      whole ? std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed)
            : std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, end);
  // to_chars writes "1e-05"; Python and the docs write "1e-5".
  if (size_t e = text.find('e'); e != std::string::npos) {
    std::string mantissa = text.substr(0, e), exponent = text.substr(e + 1);
    std::string sign = exponent[0] == '-' ? "-" : "";
    exponent.erase(0, exponent.find_first_not_of("+-"));
    exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
    text = mantissa + "e" + sign + exponent;
  }
  return text;
}

/// config.json's fields, with the configuration class's defaults.
class Config {
public:
  Config(Json json, std::string path) : json(std::move(json)), path(std::move(path)) {}

  [[noreturn]] void fail(const std::string &field, const std::string &message) const {
    throw ImportError{path + ": field '" + field + "' " + message};
  }

  /// Present and not null (Hugging Face writes null for "use the default").
  bool has(const std::string &field) const {
    return json.contains(field) && !json[field].is_null();
  }

  const Json &value(const std::string &field) const { return json[field]; }

  int64_t integer(const std::string &field, int64_t min, std::optional<int64_t> fallback) const {
    if (!has(field)) {
      if (!fallback)
        fail(field, "is missing; this model type needs it");
      return *fallback;
    }
    const Json &v = json[field];
    if (!v.is_number_integer())
      fail(field, "is " + v.dump() + ", expected an integer");
    int64_t n = v.get<int64_t>();
    if (n < min || n > 2147483647)
      fail(field, "is " + std::to_string(n) + ", expected an integer in [" + std::to_string(min) +
                      ", 2147483647]");
    return n;
  }

  double positive(const std::string &field, double fallback) const {
    if (!has(field))
      return fallback;
    const Json &v = json[field];
    if (!v.is_number() || !(v.get<double>() > 0.0))
      fail(field, "is " + v.dump() + ", expected a positive number");
    return v.get<double>();
  }

  bool boolean(const std::string &field, bool fallback) const {
    if (!has(field))
      return fallback;
    if (!json[field].is_boolean())
      fail(field, "is " + json[field].dump() + ", expected true or false");
    return json[field].get<bool>();
  }

  std::string text(const std::string &field, const std::string &fallback) const {
    if (!has(field))
      return fallback;
    if (!json[field].is_string())
      fail(field, "is " + json[field].dump() + ", expected a string");
    return json[field].get<std::string>();
  }

  /// A field tmc cannot express unless it has its default: refused, naming it.
  void require(const std::string &field, const Json &expected, const std::string &why) const {
    if (has(field) && json[field] != expected)
      fail(field, "is " + json[field].dump() + ": " + why);
  }

  /// The first of `architectures`, or "" if none is named.
  std::string architecture() const {
    if (!has("architectures"))
      return "";
    const Json &list = json["architectures"];
    if (!list.is_array() || list.empty() || !list[0].is_string())
      fail("architectures", "is " + list.dump() + ", expected a list of class names");
    if (list.size() > 1)
      fail("architectures", "names " + std::to_string(list.size()) +
                                " classes; tmc import reads a folder of one model");
    return list[0].get<std::string>();
  }

  /// torch_dtype (or `dtype`, its newer name) as the spec's dtype.
  std::string dtype() const {
    std::string field = has("dtype") ? "dtype" : "torch_dtype";
    std::string name = text(field, "float32");
    if (name == "float32")
      return "f32";
    if (name == "float16")
      return "f16";
    if (name == "bfloat16")
      return "bf16";
    fail(field, "is \"" + name + "\": tmc reads float32, float16 and bfloat16 checkpoints");
  }

private:
  Json json;
  std::string path;
};

/// The spec text, a line at a time.
class SpecText {
public:
  explicit SpecText(int depth = 0) : depth(depth) {}
  void comment(const std::string &text) {
    indent();
    out << "# " << text << "\n";
  }
  void open(const std::string &head) {
    indent();
    out << head << " {\n";
    ++depth;
  }
  void close() {
    --depth;
    indent();
    out << "}\n";
  }
  void key(const std::string &name, const std::string &value) {
    indent();
    out << name << " = " << value << "\n";
  }
  std::string str() const { return out.str(); }

private:
  void indent() {
    for (int i = 0; i < depth; ++i)
      out << "  ";
  }
  std::ostringstream out;
  int depth = 0;
};

/// One of a config's activation names as the spec's `ffn` value.
std::string activation(const Config &config, const std::string &field, const std::string &name,
                       bool gated) {
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast")
    if (!gated)
      return "gelu_tanh";
  if (name == "gelu")
    return gated ? "geglu" : "gelu";
  if (name == "relu" && !gated)
    return "relu";
  if (name == "silu" || name == "swish")
    return gated ? "swiglu" : "silu";
  config.fail(field, "is \"" + name + "\", which tmc's " +
                         (gated ? "gated feed-forward (swiglu, geglu)" : "feed-forward") +
                         " does not have");
}

struct Imported {
  std::string family;       ///< huggingface(FAMILY)
  std::string architecture; ///< the class the spec reproduces
};

Imported importGpt2(const Config &config, SpecText &spec, int64_t maxSeq) {
  std::string architecture = config.architecture();
  if (architecture.empty())
    architecture = "GPT2Model";
  if (architecture != "GPT2LMHeadModel" && architecture != "GPT2Model")
    config.fail("architectures",
                "names " + architecture + "; tmc import reads GPT2LMHeadModel and GPT2Model");
  config.require("scale_attn_weights", true,
                 "tmc scales attention scores by 1/sqrt(head_dim) always");
  config.require("scale_attn_by_inverse_layer_idx", false,
                 "tmc's attention has no per-layer scale");
  config.require("add_cross_attention", false,
                 "a GPT-2 with cross-attention has no encoder to attend to");
  const int64_t dModel = config.integer("n_embd", 1, 768);
  const int64_t positions = config.integer("n_positions", 1, 1024);
  const double eps = config.positive("layer_norm_epsilon", 1e-5);
  spec.key("vocab", std::to_string(config.integer("vocab_size", 1, 50257)));
  spec.key("d_model", std::to_string(dModel));
  spec.key("max_seq", std::to_string(maxSeq ? std::min(maxSeq, positions) : positions));
  spec.key("position", "learned");
  spec.key("dtype", config.dtype());
  if (architecture == "GPT2LMHeadModel")
    spec.key("output", config.boolean("tie_word_embeddings", true) ? "lm_head(tied = true)"
                                                                   : "lm_head(tied = false)");
  spec.key("weights", "huggingface(gpt2)");
  spec.open("decoder");
  spec.key("layers", std::to_string(config.integer("n_layer", 1, 12)));
  spec.key("heads", std::to_string(config.integer("n_head", 1, 12)));
  spec.key("d_ff", std::to_string(config.integer("n_inner", 1, 4 * dModel)));
  spec.key("ffn", activation(config, "activation_function",
                             config.text("activation_function", "gelu_new"), false));
  spec.key("norm", "pre(layernorm(eps = " + formatNumber(eps) + "))");
  spec.key("final_norm", "layernorm(eps = " + formatNumber(eps) + ")");
  spec.key("mask", "causal");
  spec.close();
  return {"gpt2", architecture};
}

Imported importBert(const Config &config, SpecText &spec, int64_t maxSeq) {
  std::string architecture = config.architecture();
  if (architecture.empty())
    architecture = "BertModel";
  const bool classifier = architecture == "BertForSequenceClassification";
  // Pre-training checkpoints (bert-base-uncased names BertForMaskedLM) hold
  // the encoder whole; the spec computes its hidden states, and the loader
  // skips the prediction heads (`cls.*`), which the comment says.
  const bool pretraining =
      architecture == "BertForMaskedLM" || architecture == "BertForPreTraining";
  if (architecture != "BertModel" && !pretraining && !classifier)
    config.fail("architectures", "names " + architecture +
                                     "; tmc import reads BertModel, "
                                     "BertForSequenceClassification, and the encoder of "
                                     "BertForMaskedLM and BertForPreTraining");
  if (pretraining)
    spec.comment(architecture + "'s prediction heads (cls.*) are not part of this model: it "
                                "returns the encoder's hidden states, as BertModel does.");
  config.require("position_embedding_type", "absolute",
                 "tmc's BERT positions are a learned table of absolute positions");
  config.require("is_decoder", false, "a BERT decoder is not supported");
  config.require("add_cross_attention", false, "a BERT with cross-attention is not supported");
  const int64_t positions = config.integer("max_position_embeddings", 1, 512);
  const double eps = config.positive("layer_norm_eps", 1e-12);
  const int64_t segments = config.integer("type_vocab_size", 0, 2);
  spec.key("vocab", std::to_string(config.integer("vocab_size", 1, 30522)));
  spec.key("d_model", std::to_string(config.integer("hidden_size", 1, 768)));
  spec.key("max_seq", std::to_string(maxSeq ? std::min(maxSeq, positions) : positions));
  spec.key("position", "learned");
  if (segments > 0)
    spec.key("segments", std::to_string(segments));
  spec.key("embed_norm", "layernorm(eps = " + formatNumber(eps) + ")");
  spec.key("dtype", config.dtype());
  if (classifier) {
    // num_labels is not saved: id2label's size is it (PretrainedConfig).
    int64_t classes = 2;
    if (config.has("id2label")) {
      if (!config.value("id2label").is_object() || config.value("id2label").empty())
        config.fail("id2label", "is " + config.value("id2label").dump().substr(0, 80) +
                                    ", expected an object of class index -> label");
      classes = static_cast<int64_t>(config.value("id2label").size());
    }
    spec.key("output",
             "classifier(classes = " + std::to_string(classes) + ", pool = first, pooler = true)");
  }
  spec.key("weights", "huggingface(bert)");
  spec.open("encoder");
  spec.key("layers", std::to_string(config.integer("num_hidden_layers", 1, 12)));
  spec.key("heads", std::to_string(config.integer("num_attention_heads", 1, 12)));
  spec.key("d_ff", std::to_string(config.integer("intermediate_size", 1, 3072)));
  spec.key("ffn", activation(config, "hidden_act", config.text("hidden_act", "gelu"), false));
  spec.key("norm", "post(layernorm(eps = " + formatNumber(eps) + "))");
  spec.key("mask", "padding");
  spec.close();
  return {"bert", architecture};
}

/// Llama, Mistral and Qwen2 share one layout; `type` is the model_type.
Imported importLlama(const Config &config, SpecText &spec, int64_t maxSeq,
                     const std::string &type) {
  const std::string prefix = type == "llama" ? "Llama" : type == "mistral" ? "Mistral" : "Qwen2";
  std::string architecture = config.architecture();
  if (architecture.empty())
    architecture = prefix + "Model";
  if (architecture != prefix + "ForCausalLM" && architecture != prefix + "Model")
    config.fail("architectures", "names " + architecture + "; tmc import reads " + prefix +
                                     "ForCausalLM and " + prefix + "Model");
  if (config.has("rope_scaling"))
    config.fail("rope_scaling", "is " + config.value("rope_scaling").dump() +
                                    ": tmc's rope has a base (rope_theta) but no scaling");
  const int64_t dModel = config.integer("hidden_size", 1, 4096);
  const int64_t heads = config.integer("num_attention_heads", 1, 32);
  const int64_t kvHeads = config.integer("num_key_value_heads", 1, heads);
  const int64_t positions = config.integer("max_position_embeddings", 1, 2048);
  const int64_t seq = maxSeq ? std::min(maxSeq, positions) : positions;
  const double eps = config.positive("rms_norm_eps", 1e-6);
  // Llama's biases are options; Qwen2 always has them on q, k and v.
  const bool bias = type == "qwen2" || config.boolean("attention_bias", false) ||
                    config.boolean("mlp_bias", false);
  // A window at least as long as max_seq never hides a key.
  std::optional<int64_t> window;
  int64_t windowFrom = 0;
  if (type == "mistral" && config.has("sliding_window"))
    window = config.integer("sliding_window", 1, std::nullopt);
  if (type == "qwen2" && config.boolean("use_sliding_window", false)) {
    window = config.integer("sliding_window", 1, 4096);
    // Qwen2 slides the window in the layers from max_window_layers on.
    windowFrom = config.integer("max_window_layers", 0, 28);
  }
  if (window && *window >= seq)
    window.reset();
  const int64_t layers = config.integer("num_hidden_layers", 1, 32);
  spec.key("vocab", std::to_string(config.integer("vocab_size", 1, 32000)));
  spec.key("d_model", std::to_string(dModel));
  spec.key("max_seq", std::to_string(seq));
  spec.key("position",
           "rope(theta = " + formatNumber(config.positive("rope_theta", 10000.0)) + ")");
  spec.key("dtype", config.dtype());
  if (architecture == prefix + "ForCausalLM")
    spec.key("output", config.boolean("tie_word_embeddings", false) ? "lm_head(tied = true)"
                                                                    : "lm_head(tied = false)");
  spec.key("weights", "huggingface(llama)");
  spec.open("decoder");
  spec.key("layers", std::to_string(layers));
  spec.key("heads", std::to_string(heads));
  if (kvHeads != heads)
    spec.key("kv_heads", std::to_string(kvHeads));
  if (config.has("head_dim"))
    spec.key("head_dim", std::to_string(config.integer("head_dim", 1, std::nullopt)));
  spec.key("d_ff", std::to_string(config.integer("intermediate_size", 1, 11008)));
  spec.key("ffn", activation(config, "hidden_act", config.text("hidden_act", "silu"), true));
  spec.key("bias", bias ? "true" : "false");
  spec.key("norm", "pre(rmsnorm(eps = " + formatNumber(eps) + "))");
  spec.key("final_norm", "rmsnorm(eps = " + formatNumber(eps) + ")");
  const std::string windowed =
      window ? "causal + sliding_window(size = " + std::to_string(*window) + ")" : "";
  if (window && windowFrom == 0)
    spec.key("mask", windowed);
  else
    spec.key("mask", "causal");
  if (window && windowFrom > 0 && windowFrom < layers) {
    spec.open("layers " + std::to_string(windowFrom) + ".." + std::to_string(layers - 1));
    spec.key("mask", windowed);
    spec.close();
  }
  spec.close();
  return {"llama", architecture};
}

/// Model types the language cannot express, and why: said rather than
/// approximated.
const char *unsupportedReason(const std::string &type) {
  if (type == "t5" || type == "mt5" || type == "umt5")
    return "its attention adds learned relative-position buckets "
           "(relative_attention_num_buckets), which tmc's positions do not have";
  if (type == "bart" || type == "mbart")
    return "its encoder and decoder have position tables of their own, offset by 2, where "
           "tmc's embed.positions serves both stacks";
  if (type == "marian")
    return "its sinusoidal positions put sines and cosines in two halves, where tmc's "
           "interleave them";
  return nullptr;
}

std::string modelName(const std::string &folder, const std::string &fallback) {
  std::string base = folder;
  while (base.size() > 1 && base.back() == '/')
    base.pop_back();
  if (size_t slash = base.rfind('/'); slash != std::string::npos)
    base = base.substr(slash + 1);
  std::string name;
  for (char c : base)
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) || name == "_" ||
      name == "__")
    name = fallback;
  return name;
}

} // namespace

llvm::Expected<std::string> importHuggingFace(const std::string &folder,
                                              const ImportOptions &options) {
  const std::string path = folder + "/config.json";
  auto error = [](const std::string &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  // A regular file of a config's size (not a FIFO, a device or a folder).
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      readInputFile(path, kMaxConfigBytes, "config.json");
  if (!buffer)
    return error(path + ": cannot read: " + llvm::toString(buffer.takeError()) +
                 " (a Hugging Face model folder holds config.json)");
  Json json = Json::parse((*buffer)->getBufferStart(), (*buffer)->getBufferEnd(), nullptr,
                          /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    return error(path + ": not a JSON object");
  Config config(std::move(json), path);
  try {
    const std::string type = config.text("model_type", "");
    if (type.empty())
      config.fail("model_type", "is missing; tmc import needs it to know the architecture");
    if (const char *reason = unsupportedReason(type))
      config.fail("model_type", "is \"" + type + "\": " + reason);
    SpecText body(/*depth=*/1);
    Imported imported;
    if (type == "gpt2")
      imported = importGpt2(config, body, options.maxSeq);
    else if (type == "bert")
      imported = importBert(config, body, options.maxSeq);
    else if (type == "llama" || type == "mistral" || type == "qwen2")
      imported = importLlama(config, body, options.maxSeq, type);
    else
      config.fail("model_type", "is \"" + type +
                                    "\"; tmc import reads gpt2, bert, llama, "
                                    "mistral and qwen2");
    SpecText spec;
    spec.comment("Imported by `tmc import` from " + path + " (" + imported.architecture +
                 ", model_type " + type + ").");
    spec.comment("The executable reads the folder's weights as they are: --weights " + folder);
    std::string text = spec.str();
    text += "model " + (options.name.empty() ? modelName(folder, type) : options.name) + " {\n";
    text += body.str();
    text += "}\n";
    return text;
  } catch (const ImportError &e) {
    return error(e.message);
  }
}

} // namespace tmc
