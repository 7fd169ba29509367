//===- InitWeights.h - Deterministic random weights -------------*- C++ -*-===//
#pragma once

#include "frontend/Manifest.h"
#include "frontend/ModelSpec.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmc {

struct InitWeightsOptions {
  uint64_t seed = 0;
  /// Multiplies the token embedding table. At the default scales a tied LM
  /// head mostly predicts the last token again; below 1 (with positions
  /// unscaled), the layers' contributions outweigh the token's own embedding
  /// and greedy decoding gives varied tokens: what tests of decoding need.
  float tokenEmbeddingScale = 1.0f;
  /// Multiplies the linear weight matrices (the LM head's untied table too):
  /// above 1, each layer changes the residual stream more.
  float gain = 1.0f;
};

/// Fills one manifest tensor. The values depend only on (seed, tensor name),
/// not on the order of the manifest, so adding a layer leaves the others
/// unchanged. Scales keep activations O(1): linear weights uniform in
/// +-gain/sqrt(in), biases +-0.1, norm weights 1 +- 0.1, embeddings +-1
/// (tokens times tokenEmbeddingScale; divided by sqrt(d_model) under embed_scale).
std::vector<float> initTensor(const ModelSpec &spec, const TensorSpec &tensor,
                              const InitWeightsOptions &options);

/// Writes every tensor of the manifest to a safetensors file at `path`, atomically.
llvm::Error writeInitialWeights(const ModelSpec &spec, const std::string &path,
                                const InitWeightsOptions &options);

} // namespace tmc
