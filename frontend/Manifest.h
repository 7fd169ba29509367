//===- Manifest.h - The weight tensors a model expects -----------*- C++ -*-===//
//
// The canonical tensor names of docs/spec-language.md, in one stable order.
// `tmc manifest` prints it, `tmc init-weights` writes it, the compiler embeds
// it in the executable, which checks a weight file against it at load time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/ModelSpec.h"
#include "runtime/tmr_abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmc {

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
};

/// The decoder's own token table, in an encoder-decoder model with
/// share_embeddings = false (the encoder keeps `embed.tokens`).
inline constexpr const char *kDecoderTokens = "decoder.embed.tokens";

/// Every tensor the model reads: the embedding tables and embed_norm, the
/// encoder's then the decoder's layers in order (each followed by its
/// final_norm), then the output head.
std::vector<TensorSpec> buildManifest(const ModelSpec &spec);

/// "F32", "F16", "BF16": the safetensors dtype strings.
const char *safetensorsDType(DType dtype);

/// The runtime's code for the same storage type.
tmr_dtype storageDType(DType dtype);

} // namespace tmc
