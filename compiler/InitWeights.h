//===- InitWeights.h - Deterministic random weights -------------*- C++ -*-===//
#pragma once

#include "frontend/Manifest.h"
#include "frontend/ModelSpec.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmc {

/// Fills one manifest tensor. The values depend only on (seed, tensor name),
/// not on the order of the manifest, so adding a layer leaves the others
/// unchanged. Scales keep activations O(1): linear weights uniform in
/// +-1/sqrt(in), biases +-0.1, norm weights 1 +- 0.1, embeddings +-1 (divided
/// by sqrt(d_model) under embed_scale).
std::vector<float> initTensor(const ModelSpec &spec, const TensorSpec &tensor, uint64_t seed);

/// Writes every tensor of the manifest to a safetensors file at `path`, atomically.
llvm::Error writeInitialWeights(const ModelSpec &spec, const std::string &path,
                                uint64_t seed);

} // namespace tmc
