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

namespace {

class ManifestBuilder {
public:
  explicit ManifestBuilder(const ModelSpec &spec) : spec(spec) {}

  std::vector<TensorSpec> build() {
    add("embed.tokens", {spec.vocab, spec.dModel});
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

  void addAttention(const std::string &prefix, const StackSpec &stack) {
    int64_t qWidth = stack.heads * stack.headDim;
    int64_t kvWidth = stack.kvHeads * stack.headDim;
    addLinear(prefix + ".q", qWidth, spec.dModel, stack.bias);
    addLinear(prefix + ".k", kvWidth, spec.dModel, stack.bias);
    addLinear(prefix + ".v", kvWidth, spec.dModel, stack.bias);
    addLinear(prefix + ".o", spec.dModel, qWidth, stack.bias);
  }

  void addStack(const std::string &name, const StackSpec &stack) {
    bool gated = stack.ffn == Activation::SwiGLU || stack.ffn == Activation::GeGLU;
    for (int64_t i = 0; i < stack.layers; ++i) {
      std::string layer = name + ".layers." + std::to_string(i);
      addAttention(layer + ".self_attn", stack);
      addNorm(layer + ".norm1", stack.norm);
      if (gated)
        addLinear(layer + ".ffn.gate", stack.dFF, spec.dModel, stack.bias);
      addLinear(layer + ".ffn.up", stack.dFF, spec.dModel, stack.bias);
      addLinear(layer + ".ffn.down", spec.dModel, stack.dFF, stack.bias);
      addNorm(layer + ".norm2", stack.norm);
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
