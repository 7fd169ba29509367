//===- Manifest.cpp - The weight tensors a model expects ------------------===//

#include "frontend/Manifest.h"

#include <string>

namespace tmc {

const char *safetensorsDType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  }
  return "F32";
}

tmr_dtype storageDType(DType dtype) {
  switch (dtype) {
  case DType::F16: return TMR_F16;
  case DType::BF16: return TMR_BF16;
  case DType::F32: break;
  }
  return TMR_F32;
}

namespace {

class ManifestBuilder {
public:
  explicit ManifestBuilder(const ModelSpec &spec) : spec(spec) {}

  std::vector<TensorSpec> build() {
    add("embed.tokens", {spec.vocab, spec.dModel});
    if (spec.isEncoderDecoder() && !spec.shareEmbeddings)
      add(kDecoderTokens, {spec.vocab, spec.dModel});
    if (spec.position == PositionKind::Learned)
      add("embed.positions", {spec.maxSeq, spec.dModel});
    if (spec.segments > 0)
      add("embed.segments", {spec.segments, spec.dModel});
    if (spec.embedNorm)
      addNorm("embed.norm", *spec.embedNorm);
    if (spec.encoder.present)
      addStack("encoder", spec.encoder);
    if (spec.decoder.present)
      addStack("decoder", spec.decoder);
    if (spec.output == OutputKind::LMHead) {
      if (!spec.tiedHead)
        add("output.weight", {spec.vocab, spec.dModel});
      if (spec.headBias)
        add("output.bias", {spec.vocab});
    } else if (spec.output == OutputKind::Classifier) {
      if (spec.pooler)
        addLinear("classifier.pooler", spec.dModel, spec.dModel, /*bias=*/true);
      addLinear("classifier", spec.classes, spec.dModel, /*bias=*/true);
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

  /// Per layer: self-attention (+ linformer projections), norm1; with
  /// cross-attention, cross_attn and norm2; the feed-forward block and the
  /// last norm (norm2, or norm3 after cross-attention).
  void addStack(const std::string &name, const StackSpec &stack) {
    for (int64_t i = 0; i < stack.layers; ++i) {
      const LayerSpec &layer =
          stack.layerSpecs.empty() ? static_cast<const LayerSpec &>(stack) : stack.layer(i);
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
      }
      bool gated = layer.ffn == Activation::SwiGLU || layer.ffn == Activation::GeGLU;
      if (gated)
        addLinear(prefix + ".ffn.gate", layer.dFF, spec.dModel, layer.bias);
      addLinear(prefix + ".ffn.up", layer.dFF, spec.dModel, layer.bias);
      addLinear(prefix + ".ffn.down", spec.dModel, layer.dFF, layer.bias);
      addNorm(prefix + (stack.crossAttention ? ".norm3" : ".norm2"), layer.norm);
    }
    if (stack.finalNorm)
      addNorm(name + ".final_norm", *stack.finalNorm);
  }

  const ModelSpec &spec;
  std::vector<TensorSpec> tensors;
};

} // namespace

std::vector<TensorSpec> buildManifest(const ModelSpec &spec) {
  return ManifestBuilder(spec).build();
}

} // namespace tmc
