//===- InitWeights.cpp - Deterministic random weights ---------------------===//

#include "compiler/InitWeights.h"

#include "compiler/Error.h"
#include "compiler/SaturatingMath.h"
#include "runtime/half.h"
#include "runtime/memory.h"
#include "runtime/safetensors.h"

#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
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

/// How much more this process may allocate, and what sets the bound.
struct MemoryLimit {
  uint64_t bytes = 0;
  std::string what; ///< e.g. "this machine's available memory (24.2 GB)"
};

/// A "Key:   123 kB" line of a /proc file, in bytes; 0 if it has none.
uint64_t procKilobytes(const char *path, llvm::StringRef key) {
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    llvm::StringRef rest(line);
    uint64_t kilobytes = 0;
    if (rest.consume_front(key) && rest.consume_front(":") &&
        !rest.trim().consumeInteger(10, kilobytes))
      return kilobytes * 1024;
  }
  return 0;
}

/// The tighter of the memory the kernel could hand out without swapping
/// (MemAvailable: free memory plus the caches it can drop) and what is left
/// under the process's address-space limit (`ulimit -v`); nullopt if
/// neither is known.
std::optional<MemoryLimit> memoryLimit() {
  std::optional<MemoryLimit> limit;
  if (uint64_t available = procKilobytes("/proc/meminfo", "MemAvailable"))
    limit = MemoryLimit{available, "this machine's available memory (" +
                                       tmr::formatBytes(available) + ")"};
  if (uint64_t addressSpace = tmr::addressSpaceLimitBytes()) {
    uint64_t used = procKilobytes("/proc/self/status", "VmSize");
    uint64_t left = addressSpace > used ? addressSpace - used : 0;
    if (!limit || left < limit->bytes)
      limit = MemoryLimit{left, "the " + tmr::formatBytes(left) +
                                    " left under the process's address-space limit of " +
                                    tmr::formatBytes(addressSpace) + " (ulimit -v)"};
  }
  return limit;
}

/// Refuses, before anything is allocated, weights that cannot be held in
/// memory at once (writeInitialWeights holds all of them): the allocation
/// would fail in LLVM's handler, which aborts, or succeed and end in the
/// out-of-memory killer.
llvm::Error checkFitsInMemory(const ModelSpec &spec, const std::vector<TensorSpec> &manifest,
                              tmr_dtype dtype, const std::string &path) {
  // Every tensor as f32, and again in its storage type if that is narrower.
  int64_t bytesPerElement = dtype == TMR_F32 ? 4 : 4 + 2;
  int64_t total = 0, largest = 0;
  const TensorSpec *largestTensor = nullptr;
  for (const TensorSpec &tensor : manifest) {
    int64_t bytes = bytesPerElement;
    for (int64_t dim : tensor.shape)
      bytes = saturatingMul(bytes, dim);
    total = saturatingAdd(total, bytes);
    if (!largestTensor || bytes > largest) {
      largest = bytes;
      largestTensor = &tensor;
    }
  }
  std::optional<MemoryLimit> limit = memoryLimit();
  if (!limit || !largestTensor || static_cast<uint64_t>(total) <= limit->bytes)
    return llvm::Error::success();
  std::string shape;
  for (int64_t dim : largestTensor->shape)
    shape += (shape.empty() ? "" : ", ") + std::to_string(dim);
  return makeError(path + ": the weights of model '" + spec.name + "' need " +
                   tmr::formatBytes(total) + " of memory to be written (the largest, tensor '" +
                   largestTensor->name + "' [" + shape + "], " + tmr::formatBytes(largest) +
                   "), more than " + limit->what);
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
  if (llvm::Error error = checkFitsInMemory(spec, manifest, dtype, path))
    return error;
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
