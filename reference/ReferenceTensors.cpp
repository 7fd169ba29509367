//===- ReferenceTensors.cpp - The tensors the reference reads -------------===//
//
// Transcribed from the contract's "Canonical weight names" on its own, not
// taken from frontend/Manifest.cpp, so that a test comparing the two catches
// a manifest (or a reference) that misreads the contract.
//
//===----------------------------------------------------------------------===//

#include "reference/Reference.h"

namespace tmc::ref {

namespace {

class TensorList {
public:
  explicit TensorList(const ModelSpec &spec) : spec(spec) {}

  std::vector<TensorSpec> build() {
    int64_t d = spec.dModel;
    add("embed.tokens", {spec.vocab, d});
    if (spec.isEncoderDecoder() && !spec.shareEmbeddings)
      add("decoder.embed.tokens", {spec.vocab, d});
    if (spec.position == PositionKind::Learned)
      add("embed.positions", {spec.maxSeq, d});
    if (spec.segments > 0)
      add("embed.segments", {spec.segments, d});
    if (spec.embedNorm)
      addNorm("embed.norm", *spec.embedNorm);
    if (spec.encoder.present)
      addStack("encoder", spec.encoder);
    if (spec.decoder.present)
      addStack("decoder", spec.decoder);
    if (spec.output == OutputKind::LMHead) {
      if (!spec.tiedHead)
        add("output.weight", {spec.vocab, d});
      if (spec.headBias)
        add("output.bias", {spec.vocab});
    } else if (spec.output == OutputKind::Classifier) {
      if (spec.pooler) {
        add("classifier.pooler.weight", {d, d});
        add("classifier.pooler.bias", {d});
      }
      add("classifier.weight", {spec.classes, d});
      add("classifier.bias", {spec.classes});
    }
    return std::move(tensors);
  }

private:
  void add(std::string name, std::vector<int64_t> shape) {
    tensors.push_back({std::move(name), std::move(shape), spec.dtype});
  }

  void addNorm(const std::string &prefix, const NormSpec &norm) {
    add(prefix + ".weight", {spec.dModel});
    if (norm.kind == NormKind::LayerNorm)
      add(prefix + ".bias", {spec.dModel});
  }

  void addLinear(const std::string &prefix, int64_t out, int64_t in, bool bias) {
    add(prefix + ".weight", {out, in});
    if (bias)
      add(prefix + ".bias", {out});
  }

  void addAttention(const std::string &prefix, const LayerSpec &layer) {
    int64_t qWidth = layer.heads * layer.headDim;
    int64_t kvWidth = layer.kvHeads * layer.headDim;
    addLinear(prefix + ".q", qWidth, spec.dModel, layer.bias);
    addLinear(prefix + ".k", kvWidth, spec.dModel, layer.bias);
    addLinear(prefix + ".v", kvWidth, spec.dModel, layer.bias);
    addLinear(prefix + ".o", spec.dModel, qWidth, layer.bias);
  }

  void addStack(const std::string &name, const StackSpec &stack) {
    for (int64_t i = 0; i < static_cast<int64_t>(stack.layerSpecs.size()); ++i) {
      const LayerSpec &layer = stack.layer(i);
      std::string prefix = name + ".layers." + std::to_string(i);
      addAttention(prefix + ".self_attn", layer);
      if (layer.attention == AttentionKind::Linformer) {
        add(prefix + ".attn_proj.k.weight", {layer.linformerK, spec.maxSeq});
        add(prefix + ".attn_proj.v.weight", {layer.linformerK, spec.maxSeq});
      }
      addNorm(prefix + ".norm1", layer.norm);
      if (stack.crossAttention) {
        addAttention(prefix + ".cross_attn", layer);
        addNorm(prefix + ".norm2", layer.norm);
        addNorm(prefix + ".norm3", layer.norm);
      } else {
        addNorm(prefix + ".norm2", layer.norm);
      }
      bool gated = layer.ffn == Activation::SwiGLU || layer.ffn == Activation::GeGLU;
      if (gated)
        addLinear(prefix + ".ffn.gate", layer.dFF, spec.dModel, layer.bias);
      addLinear(prefix + ".ffn.up", layer.dFF, spec.dModel, layer.bias);
      addLinear(prefix + ".ffn.down", spec.dModel, layer.dFF, layer.bias);
    }
    if (stack.finalNorm)
      addNorm(name + ".final_norm", *stack.finalNorm);
  }

  const ModelSpec &spec;
  std::vector<TensorSpec> tensors;
};

} // namespace

std::vector<TensorSpec> requiredTensors(const ModelSpec &spec) {
  return TensorList(spec).build();
}

} // namespace tmc::ref
