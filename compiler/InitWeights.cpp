//===- InitWeights.cpp - Deterministic random weights ---------------------===//

#include "compiler/InitWeights.h"

#include "compiler/Error.h"
#include "runtime/half.h"
#include "runtime/safetensors.h"

#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <random>

namespace tmc {

namespace {

/// FNV-1a: a stable hash of the tensor name (std::hash is not stable across
/// library versions, and weight files must be reproducible).
uint64_t hashName(const std::string &name) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : name) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

} // namespace

std::vector<float> initTensor(const ModelSpec &spec, const TensorSpec &tensor,
                              const InitWeightsOptions &options) {
  size_t count = 1;
  for (int64_t dim : tensor.shape)
    count *= static_cast<size_t>(dim);
  llvm::StringRef name(tensor.name);

  float center = 0.0f, radius;
  // An encoder-decoder's unshared decoder table is "decoder.embed.tokens".
  bool tokenTable = name == "embed.tokens" || name == "decoder.embed.tokens";
  if (tokenTable || (name.starts_with("embed.") && !name.starts_with("embed.norm"))) {
    radius = tokenTable ? options.tokenEmbeddingScale : 1.0f;
    if (spec.embedScale)
      radius /= std::sqrt(static_cast<float>(spec.dModel));
  } else if (name.ends_with(".weight") && tensor.shape.size() == 2) {
    radius = options.gain / std::sqrt(static_cast<float>(tensor.shape[1]));
  } else if (name.ends_with(".weight")) { // norm scales
    center = 1.0f;
    radius = 0.1f;
  } else { // biases
    radius = 0.1f;
  }

  // mt19937_64's sequence is fixed by the C++ standard; the uniform mapping is
  // done by hand because std::uniform_real_distribution's is not.
  std::mt19937_64 generator(options.seed ^ hashName(tensor.name));
  std::vector<float> values(count);
  for (float &value : values) {
    double unit = static_cast<double>(generator() >> 11) * 0x1.0p-53; // [0, 1)
    value = center + radius * static_cast<float>(2.0 * unit - 1.0);
  }
  return values;
}

llvm::Error writeInitialWeights(const ModelSpec &spec, const std::string &path,
                                const InitWeightsOptions &options) {
  std::vector<TensorSpec> manifest = buildManifest(spec);
  // f16/bf16 models get the same values, rounded to their storage type.
  tmr_dtype dtype = storageDType(spec.dtype);
  std::vector<std::vector<float>> storage;
  std::vector<std::vector<uint16_t>> narrow;
  storage.reserve(manifest.size());
  narrow.reserve(manifest.size());
  std::vector<tmr::TensorToWrite> tensors;
  for (const TensorSpec &tensor : manifest) {
    storage.push_back(initTensor(spec, tensor, options));
    const void *data = storage.back().data();
    if (dtype != TMR_F32) {
      narrow.push_back(tmr::narrowFromF32(storage.back().data(), storage.back().size(), dtype));
      data = narrow.back().data();
    }
    tensors.push_back({tensor.name, dtype, tensor.shape, data});
  }
  std::string error;
  if (!tmr::writeSafetensors(path, tensors, &error))
    return makeError(error);
  return llvm::Error::success();
}

} // namespace tmc
