//===- CheckCommands.cpp - `tmc check` and `tmc manifest` ----------------===//
//
// The commands that read a spec without compiling it: its size, cost and
// shape (check), and the weight tensors it expects (manifest). The numbers
// come from frontend/ModelStats.h; their definitions are in
// docs/spec-language.md, "What tmc check reports".
//
//===----------------------------------------------------------------------===//

#include "compiler/Error.h"
#include "compiler/Pipeline.h"
#include "compiler/PreparedWeights.h"
#include "compiler/Quantize.h"
#include "compiler/SaturatingMath.h"
#include "compiler/tools/Commands.h"
#include "compiler/tools/RunMemory.h"
#include "frontend/Diagnostics.h"
#include "frontend/Manifest.h"
#include "frontend/MaskAnalysis.h"
#include "frontend/ModelStats.h"
#include "runtime/hf_names.h"
#include "runtime/memory.h"
#include "runtime/safetensors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <set>

using namespace llvm;
using nlohmann::json;

namespace tmc::tools {

namespace {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  }
  return "f32";
}

std::string normText(const NormSpec &norm) {
  return std::string(toString(norm.kind)) + "(eps = " + formatFloat(norm.eps) + ")";
}

std::string outputText(const ModelSpec &spec) {
  switch (spec.output) {
  case OutputKind::Hidden: return "hidden";
  case OutputKind::LMHead:
    return std::string("lm_head(tied = ") + (spec.tiedHead ? "true" : "false") +
           ", bias = " + (spec.headBias ? "true" : "false") + ")";
  case OutputKind::Classifier:
    return "classifier(classes = " + std::to_string(spec.classes) +
           ", pool = " + (spec.pool == Pooling::First ? "first" : "mean") +
           (spec.pooler ? ", pooler = true" : "") + ")";
  }
  return "hidden";
}

/// The keys a `layers A..B { }` block may change, as JSON.
json layerJson(const LayerSpec &layer) {
  json j = {{"heads", layer.heads},
            {"kv_heads", layer.kvHeads},
            {"head_dim", layer.headDim},
            {"d_ff", layer.dFF},
            {"ffn", toString(layer.ffn)},
            {"norm", std::string(toString(layer.placement)) + "(" + normText(layer.norm) + ")"},
            {"bias", layer.bias},
            {"mask", formatMask(layer.mask)},
            {"attention", layer.attention == AttentionKind::Full
                              ? std::string("full")
                              : "linformer(k = " + std::to_string(layer.linformerK) + ")"},
            {"precision", toString(layer.precision)},
            {"kv_cache", toString(layer.kvCache)}};
  return j;
}

/// Runs of consecutive layers that share every key: [first, last, keys].
std::vector<std::tuple<int64_t, int64_t, json>> layerGroups(const StackSpec &stack) {
  std::vector<std::tuple<int64_t, int64_t, json>> groups;
  for (int64_t i = 0; i < stack.layers; ++i) {
    json keys = layerJson(stack.layerSpecs.empty() ? stack : stack.layer(i));
    if (!groups.empty() && std::get<2>(groups.back()) == keys)
      std::get<1>(groups.back()) = i;
    else
      groups.emplace_back(i, i, std::move(keys));
  }
  return groups;
}

json stackJson(const StackSpec &stack, int64_t parameters, double prefillFlops) {
  json j = layerJson(stack);
  // The stack block's heads may leave it no head_dim of its own where every
  // layer's override sets one (frontend/SemaStack.cpp): null, not 0.
  if (stack.headDim <= 0)
    j["head_dim"] = nullptr;
  j["layers"] = stack.layers;
  j["final_norm"] = stack.finalNorm ? normText(*stack.finalNorm) : "none";
  j["cross_attention"] = stack.crossAttention;
  j["parameters"] = parameters;
  j["prefill_flops_per_token"] = std::llround(prefillFlops);
  json groups = json::array();
  for (auto &[first, last, keys] : layerGroups(stack)) {
    keys["first"] = first;
    keys["last"] = last;
    groups.push_back(std::move(keys));
  }
  j["layer_groups"] = std::move(groups);
  return j;
}

/// A norm as the `config` object states it: {"kind", "eps"}.
json normConfig(const NormSpec &norm) {
  return {{"kind", toString(norm.kind)}, {"eps", norm.eps}};
}

json optionalNormConfig(const std::optional<NormSpec> &norm) {
  return norm ? normConfig(*norm) : json(nullptr);
}

/// One mask term with every argument, e.g. {"kind": "random", "per_row": 2,
/// "seed": 7}; `none` is the empty list of terms.
json maskTermConfig(const MaskTerm &term) {
  json j = {{"kind", toString(term.kind)}};
  switch (term.kind) {
  case MaskKind::Causal:
  case MaskKind::Padding:
    break;
  case MaskKind::SlidingWindow:
    j["size"] = term.size;
    break;
  case MaskKind::DilatedWindow:
    j["size"] = term.size;
    j["dilation"] = term.dilation;
    break;
  case MaskKind::Global:
    j["tokens"] = term.tokens;
    break;
  case MaskKind::Random:
    j["per_row"] = term.perRow;
    j["seed"] = term.seed;
    break;
  }
  return j;
}

/// Every key of one layer after overrides and defaults.
json layerConfig(const LayerSpec &layer) {
  json mask = json::array();
  for (const MaskTerm &term : layer.mask.terms)
    mask.push_back(maskTermConfig(term));
  json attention = {{"kind", layer.attention == AttentionKind::Full ? "full" : "linformer"}};
  if (layer.attention == AttentionKind::Linformer)
    attention["k"] = layer.linformerK;
  json norm = normConfig(layer.norm);
  norm["placement"] = toString(layer.placement);
  return {{"heads", layer.heads},
          {"kv_heads", layer.kvHeads},
          {"head_dim", layer.headDim},
          {"d_ff", layer.dFF},
          {"ffn", toString(layer.ffn)},
          {"norm", std::move(norm)},
          {"bias", layer.bias},
          {"mask", std::move(mask)},
          {"attention", std::move(attention)},
          {"precision", toString(layer.precision)},
          {"kv_cache", toString(layer.kvCache)}};
}

json stackConfig(const StackSpec &stack) {
  if (!stack.present)
    return nullptr;
  json layers = json::array();
  for (int64_t i = 0; i < stack.layers; ++i)
    layers.push_back(layerConfig(stack.layerSpecs.empty() ? stack : stack.layer(i)));
  return {{"layers", stack.layers},
          {"final_norm", optionalNormConfig(stack.finalNorm)},
          {"cross_attention", stack.crossAttention},
          {"layer_specs", std::move(layers)}};
}

/// The resolved model, every key with its default applied and every layer's
/// overrides resolved, in a form a program can rebuild the model from (the
/// PyTorch parity tests do); docs/architecture.md describes it.
json modelConfig(const ModelSpec &spec) {
  json position = {{"kind", toString(spec.position)}};
  if (spec.position == PositionKind::Rope)
    position["theta"] = spec.ropeTheta;
  json output;
  switch (spec.output) {
  case OutputKind::Hidden:
    output = {{"kind", "hidden"}};
    break;
  case OutputKind::LMHead:
    output = {{"kind", "lm_head"}, {"tied", spec.tiedHead}, {"bias", spec.headBias}};
    break;
  case OutputKind::Classifier:
    output = {{"kind", "classifier"},
              {"classes", spec.classes},
              {"pool", spec.pool == Pooling::First ? "first" : "mean"},
              {"pooler", spec.pooler}};
    break;
  }
  return {{"name", spec.name},
          {"vocab", spec.vocab},
          {"d_model", spec.dModel},
          {"max_seq", spec.maxSeq},
          {"position", std::move(position)},
          {"embed_scale", spec.embedScale},
          {"embed_norm", optionalNormConfig(spec.embedNorm)},
          {"segments", spec.segments},
          {"share_embeddings", spec.shareEmbeddings},
          {"output", std::move(output)},
          {"dtype", dtypeName(spec.dtype)},
          {"precision", toString(spec.precision)},
          {"kv_cache", toString(spec.kvCache)},
          {"encoder", stackConfig(spec.encoder)},
          {"decoder", stackConfig(spec.decoder)}};
}

/// A FLOP count as JSON: the nearest integer while one is exact in a double.
json flopsJson(double flops) {
  if (flops < 9.0e15)
    return std::llround(flops);
  return flops;
}

/// "124439808 (124.4M)".
std::string humanCount(double value) {
  static const char *suffixes[] = {"", "K", "M", "G", "T", "P", "E"};
  unsigned k = 0;
  double scaled = value;
  while (scaled >= 1000 && k + 1 < std::size(suffixes)) {
    scaled /= 1000;
    ++k;
  }
  std::string text;
  raw_string_ostream os(text);
  if (value < 9.0e15)
    os << static_cast<int64_t>(std::llround(value));
  else
    os << format("%.4g", value);
  if (k > 0)
    os << format(" (%.1f%s)", scaled, suffixes[k]);
  return text;
}

void printStack(raw_ostream &os, const char *name, const json &s) {
  os << "  " << name << ": " << s["layers"].get<int64_t>() << " layers, final_norm "
     << s["final_norm"].get<std::string>()
     << (s["cross_attention"].get<bool>() ? ", cross-attention" : "") << ", "
     << humanCount(static_cast<double>(s["parameters"].get<int64_t>())) << " parameters\n";
  const json &groups = s["layer_groups"];
  for (const json &g : groups) {
    os << "    ";
    if (groups.size() > 1)
      os << "layers " << g["first"].get<int64_t>() << ".." << g["last"].get<int64_t>()
         << ": ";
    os << g["heads"].get<int64_t>() << " heads (kv " << g["kv_heads"].get<int64_t>()
       << ", head_dim " << g["head_dim"].get<int64_t>() << "), d_ff "
       << g["d_ff"].get<int64_t>() << ", ffn " << g["ffn"].get<std::string>() << ", "
       << g["norm"].get<std::string>() << (g["bias"].get<bool>() ? ", bias" : ", no bias")
       << ", mask " << g["mask"].get<std::string>() << ", attention "
       << g["attention"].get<std::string>();
    // Said only when not the default, so that f32 models read as before.
    if (g["precision"].get<std::string>() != toString(Precision::F32))
      os << ", precision " << g["precision"].get<std::string>();
    if (g["kv_cache"].get<std::string>() != toString(CachePrecision::F32))
      os << ", kv_cache " << g["kv_cache"].get<std::string>();
    os << "\n";
  }
}

/// How the decoder's caches store keys and values: one precision's name
/// when every layer's is the same (f32 for a model without caches), else
/// "mixed".
std::string cachePrecisionWord(const ModelSpec &spec) {
  std::set<std::string> used;
  for (const LayerSpec &layer : spec.decoder.layerSpecs)
    used.insert(toString(layer.kvCache));
  if (used.empty())
    return toString(CachePrecision::F32);
  return used.size() == 1 ? *used.begin() : "mixed";
}

/// Which precisions the linears (the head's too) compute in.
struct LinearPrecisions {
  bool f32 = false, bf16 = false, int8 = false, q4 = false;

  explicit LinearPrecisions(const ModelSpec &spec) {
    if (spec.output != OutputKind::Hidden)
      note(spec.precision);
    for (const StackSpec *stack : {&spec.encoder, &spec.decoder})
      for (const LayerSpec &layer : stack->layerSpecs)
        note(layer.precision);
  }

  /// One precision's name, when every linear has it, else "mixed".
  std::string word() const {
    if (f32 + bf16 + int8 + q4 > 1)
      return "mixed";
    return toString(bf16   ? Precision::BF16
                    : int8 ? Precision::Int8
                    : q4   ? Precision::Q4
                           : Precision::F32);
  }

private:
  void note(Precision precision) {
    switch (precision) {
    case Precision::F32: f32 = true; break;
    case Precision::BF16: bf16 = true; break;
    case Precision::Int8: int8 = true; break;
    case Precision::Q4:
      q4 = true;
      break;
    }
  }
};

/// The `precision` line's parenthesis: the weights by the precision they
/// are computed in (the weight bytes line says how the file stores them).
std::string precisionBreakdown(const ModelSizes &sizes, const LinearPrecisions &linears) {
  std::string f32 = tmr::formatBytes(sizes.f32WeightBytes);
  if (sizes.bf16WeightBytes == 0 && sizes.int8WeightBytes == 0 && sizes.q4WeightBytes == 0)
    return "all weights f32: " + f32;
  std::string text = "linears ";
  if (sizes.bf16WeightBytes > 0)
    text += tmr::formatBytes(sizes.bf16WeightBytes) + " as bf16 + ";
  // The int8 bytes include each output channel's scale and correction.
  if (sizes.int8WeightBytes > 0)
    text += tmr::formatBytes(sizes.int8WeightBytes) + " as int8 + ";
  // The q4 bytes include each block's f16 scale.
  if (sizes.q4WeightBytes > 0)
    text += tmr::formatBytes(sizes.q4WeightBytes) + " as q4 + ";
  return text + f32 + " f32 for " + (linears.f32 ? "the f32 linears, " : "") +
         "norms, biases and embeddings";
}

} // namespace

namespace {
/// KV caches of `batch` sequences, each of max_seq tokens.
int64_t batchCacheBytes(const RunMemory &memory, int64_t batch) {
  return saturatingMul(memory.kvCache, batch);
}
/// A batch's footprint: the single sequence's, with a cache per sequence.
int64_t batchTotal(const RunMemory &memory, int64_t batch) {
  RunMemory many = memory;
  many.kvCache = batchCacheBytes(memory, batch);
  return many.total();
}
} // namespace

int checkCommand(int argc, char **argv) {
  releaseGlobalOptions({"json", "precision", "max-batch"});
  cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("MODEL.tm"),
                             cl::cat(toolOptions));
  cl::opt<bool> asJson("json", cl::desc("Print the summary as JSON"), cl::cat(toolOptions));
  cl::opt<int> maxBatch("max-batch",
                        cl::desc("Report the memory of serving B sequences at once, as `tmc "
                                 "compile --max-batch B` plans it (1 to 256, default 16)"),
                        cl::value_desc("B"), cl::init(16), cl::cat(toolOptions));
  PrecisionOption precision;
  if (!parseOptions(argc, argv, "tmc check: parse and verify a model spec, and summarize it\n"))
    return kExitUsage;
  if (maxBatch < 1 || maxBatch > 256)
    return reportError(
        makeUsageError("--max-batch: " + Twine(maxBatch.getValue()) + " is out of range [1, 256]"));
  Expected<SpecOverrides> overrides = precision.overrides();
  if (!overrides)
    return reportError(overrides.takeError());
  auto loaded = load(input, *overrides);
  if (!loaded)
    return 1;
  const ModelSpec &spec = *loaded->spec;
  std::string overflow;
  std::optional<ModelSizes> sizes = computeSizes(spec, &overflow);
  if (!sizes) // Sema rejects such specs; kept for safety.
    return reportError(makeError(overflow + " does not fit in 64 bits"));
  FlopCounts flops = countFlops(spec);

  json summary = {{"model", spec.name},
                  {"vocab", spec.vocab},
                  {"d_model", spec.dModel},
                  {"max_seq", spec.maxSeq},
                  {"position", toString(spec.position)},
                  {"embed_scale", spec.embedScale},
                  {"embed_norm", spec.embedNorm ? normText(*spec.embedNorm) : "none"},
                  {"segments", spec.segments},
                  {"share_embeddings", spec.shareEmbeddings},
                  {"output", outputText(spec)},
                  {"dtype", dtypeName(spec.dtype)},
                  {"parameters", sizes->parameters},
                  {"parameters_by_part",
                   {{"embeddings", sizes->embeddingParameters},
                    {"encoder", sizes->encoderParameters},
                    {"decoder", sizes->decoderParameters},
                    {"head", sizes->headParameters}}},
                  {"weight_bytes", sizes->weightBytes},
                  // The model-level value (after --precision), and the
                  // weights by the precision the model computes them in.
                  {"precision", toString(spec.precision)},
                  {"weight_bytes_by_precision",
                   {{"f32", sizes->f32WeightBytes},
                    {"bf16", sizes->bf16WeightBytes},
                    {"int8", sizes->int8WeightBytes},
                    {"q4", sizes->q4WeightBytes}}},
                  {"kv_cache_bytes", sizes->kvCacheBytes},
                  {"kv_cache", cachePrecisionWord(spec)},
                  {"flops_per_token",
                   {{"prefill", flopsJson(flops.prefill)},
                    {"decode", flops.decode ? flopsJson(*flops.decode) : json(nullptr)},
                    {"exact", flops.exact}}}};
  if (spec.position == PositionKind::Rope)
    summary["rope_theta"] = spec.ropeTheta;
  if (spec.encoder.present)
    summary["encoder"] = stackJson(spec.encoder, sizes->encoderParameters, flops.encoderPrefill);
  if (spec.decoder.present)
    summary["decoder"] = stackJson(spec.decoder, sizes->decoderParameters, flops.decoderPrefill);
  summary["config"] = modelConfig(spec);
  std::optional<RunMemory> memory = estimateRunMemory(*loaded);
  uint64_t machine = tmr::physicalMemoryBytes();
  if (memory) {
    summary["run_memory_bytes"] = {{"weights", memory->weights},     {"packed", memory->packed},
                                   {"kv_cache", memory->kvCache},    {"activations", memory->activations},
                                   {"output", memory->output},       {"total", memory->total()}};
    summary["machine_memory_bytes"] = machine;
    // A batch (MODEL serve, --batch-input): a cache per sequence; the arena
    // holds max_seq rows, which a batch's call shares among its sequences.
    summary["batch_memory_bytes"] = {{"max_batch", maxBatch.getValue()},
                                     {"kv_cache", batchCacheBytes(*memory, maxBatch)},
                                     {"total", batchTotal(*memory, maxBatch)}};
  }
  // Too large is not an error in the spec: the same model may run elsewhere.
  if (memory && machine > 0 && static_cast<uint64_t>(memory->total()) > machine)
    reportWarning(input.getValue() + ": model '" + spec.name + "' needs about " +
                  tmr::formatBytes(memory->total()) +
                  " of memory at run time, more than this machine's " + tmr::formatBytes(machine));
  if (asJson) {
    outs() << summary.dump(2) << "\n";
    return 0;
  }

  raw_ostream &os = outs();
  os << input << ": model '" << spec.name << "' is valid\n";
  os << "  parameters      " << humanCount(static_cast<double>(sizes->parameters)) << "\n";
  os << "    embeddings " << sizes->embeddingParameters << ", encoder "
     << sizes->encoderParameters << ", decoder " << sizes->decoderParameters << ", head "
     << sizes->headParameters << "\n";
  os << "  weight bytes    " << humanCount(static_cast<double>(sizes->weightBytes)) << " ("
     << dtypeName(spec.dtype) << ")\n";
  os << "  KV-cache bytes  " << humanCount(static_cast<double>(sizes->kvCacheBytes)) << " ("
     << cachePrecisionWord(spec) << ", max_seq = " << spec.maxSeq << ")\n";
  os << "  FLOPs/token     prefill " << humanCount(flops.prefill) << ", decode "
     << (flops.decode ? humanCount(*flops.decode) : std::string("n/a (no decoder)"))
     << (flops.exact ? "" : " (attention terms estimated)") << "\n";
  os << "  d_model " << spec.dModel << ", vocab " << spec.vocab << ", max_seq " << spec.maxSeq
     << ", position " << toString(spec.position) << ", output " << outputText(spec) << ", dtype "
     << dtypeName(spec.dtype)
     << (spec.weightScheme.empty() ? std::string()
                                   : ", weights huggingface(" + spec.weightScheme + ")")
     << "\n";
  LinearPrecisions linears(spec);
  os << "  precision       " << linears.word() << " (" << precisionBreakdown(*sizes, linears)
     << ")\n";
  for (const char *name : {"encoder", "decoder"})
    if (summary.contains(name))
      printStack(os, name, summary[name]);
  if (memory)
    os << "  run memory      " << tmr::formatBytes(memory->total()) << " at max_seq: weights "
       << tmr::formatBytes(memory->weights) << " (f32) + packed "
       << tmr::formatBytes(memory->packed) << " + KV cache " << tmr::formatBytes(memory->kvCache)
       << " + activations " << tmr::formatBytes(memory->activations) << " + output "
       << tmr::formatBytes(memory->output) << "; this machine has "
       << tmr::formatBytes(machine) << "\n";
  if (memory && memory->kvCache > 0)
    os << "  batch memory    " << tmr::formatBytes(batchTotal(*memory, maxBatch)) << " for "
       << maxBatch << " sequences at once (`tmc compile --max-batch " << maxBatch
       << "`, MODEL serve): KV caches " << maxBatch << " x " << tmr::formatBytes(memory->kvCache)
       << ", the rest as above\n";
  return 0;
}

namespace {

/// One line (or JSON entry) of `tmc manifest`.
struct ListedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype; ///< the safetensors spelling: "F32", "I8", ...
  /// Where a `weights = huggingface(...)` checkpoint holds it, e.g.
  /// "[transformer.]h.0.attn.c_attn.weight (transposed, part 1 of 3)".
  std::string source;
};

/// The checkpoint tensor a Hugging Face family reads `name` from
/// (runtime/hf_names.h), as the manifest shows it; the prefix, which only a
/// checkpoint with a head has, in brackets.
std::string checkpointSource(const std::string &family, const std::string &name) {
  const tmr::hf::Family *scheme = tmr::hf::findFamily(family);
  std::optional<tmr::hf::Source> source = scheme ? scheme->source(name) : std::nullopt;
  if (!source)
    return "";
  // Appended piece by piece: GCC 12's -Wrestrict misreads "[" + string.
  std::string text;
  if (source->prefixed)
    text.append("[").append(scheme->prefix).append("]");
  text.append(source->names.front());
  std::vector<std::string> notes;
  if (source->transposed)
    notes.push_back("transposed");
  if (source->parts > 1)
    notes.push_back("part " + std::to_string(source->part + 1) + " of " +
                    std::to_string(source->parts));
  if (source->leadingRows)
    notes.push_back("leading rows");
  if (source->zerosIfAbsent)
    notes.push_back("zeros if absent");
  for (size_t i = 0; i < notes.size(); ++i) {
    text.append(i ? ", " : " (");
    text.append(notes[i]);
  }
  if (!notes.empty())
    text.append(")");
  return text;
}

/// The tensors of `tmc quantize`'s file for the model (compiler/Quantize.h),
/// from its plan; nullopt when the plan cannot be formed (diagnosed).
std::optional<std::vector<ListedTensor>> quantizedTensors(const std::string &input,
                                                          const SpecOverrides &overrides) {
  PipelineOptions pipeline;
  pipeline.input = input;
  pipeline.overrides = overrides;
  Expected<std::unique_ptr<PlannedModel>> model = runPipeline(pipeline);
  if (!model) {
    reportError(model.takeError());
    return std::nullopt;
  }
  const KernelPlan &plan = (*model)->plan;
  Expected<std::vector<StoredTensor>> layout =
      quantizedLayout(plan.weights, quantizedStorage(plan));
  if (!layout) {
    reportError(layout.takeError());
    return std::nullopt;
  }
  std::vector<ListedTensor> listed;
  for (const StoredTensor &tensor : *layout)
    listed.push_back({tensor.name, tensor.shape, tmr::dtypeName(tensor.dtype)});
  return listed;
}

} // namespace

int manifestCommand(int argc, char **argv) {
  releaseGlobalOptions({"json", "quantized", "precision"});
  cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("MODEL.tm"),
                             cl::cat(toolOptions));
  cl::opt<bool> asJson("json", cl::desc("Print the tensors as JSON"), cl::cat(toolOptions));
  cl::opt<bool> quantized("quantized",
                          cl::desc("List the tensors as `tmc quantize` writes them: the bf16, "
                                   "int8 and q4 linears' weights quantized, with their scales "
                                   "(NAME.scale)"),
                          cl::cat(toolOptions));
  PrecisionOption precision;
  if (!parseOptions(argc, argv, "tmc manifest: list the weight tensors a model expects\n"))
    return kExitUsage;
  Expected<SpecOverrides> overrides = precision.overrides();
  if (!overrides)
    return reportError(overrides.takeError());
  // The f32 manifest is the same in every precision: a --precision without
  // --quantized would be a mistake that changes nothing.
  if (overrides->precision && !quantized)
    return reportError(makeUsageError(
        "--precision applies with --quantized (the manifest's own dtypes do not depend on it)"));
  if (overrides->kvCache)
    return reportError(makeUsageError(
        "--kv-cache does not change a model's weights, which are all tmc manifest lists"));
  std::vector<ListedTensor> listed;
  if (quantized) {
    std::optional<std::vector<ListedTensor>> tensors = quantizedTensors(input, *overrides);
    if (!tensors)
      return 1;
    listed = std::move(*tensors);
  } else {
    auto loaded = load(input);
    if (!loaded)
      return 1;
    for (const TensorSpec &tensor : buildManifest(*loaded->spec))
      listed.push_back({tensor.name, tensor.shape, safetensorsDType(tensor.dtype),
                        loaded->spec->weightScheme.empty()
                            ? std::string()
                            : checkpointSource(loaded->spec->weightScheme, tensor.name)});
  }
  if (asJson) {
    json list = json::array();
    for (const ListedTensor &tensor : listed) {
      list.push_back({{"name", tensor.name}, {"shape", tensor.shape}, {"dtype", tensor.dtype}});
      if (!tensor.source.empty())
        list.back()["checkpoint"] = tensor.source;
    }
    outs() << list.dump(2) << "\n";
    return 0;
  }
  for (const ListedTensor &tensor : listed) {
    outs() << tensor.name << " [";
    interleaveComma(tensor.shape, outs());
    outs() << "] " << tensor.dtype;
    if (!tensor.source.empty())
      outs() << "  <- " << tensor.source;
    outs() << "\n";
  }
  return 0;
}

} // namespace tmc::tools
