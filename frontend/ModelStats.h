//===- ModelStats.h - Size and cost of a checked model ------------*- C++ -*-===//
//
// The arithmetic behind `tmc check`: parameters and weight bytes (summed over
// the manifest, so they always agree with `tmc manifest`), KV-cache bytes,
// and FLOPs per token for prefill and for decoding. The formulas are spelled
// out in docs/spec-language.md ("What tmc check reports").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/ModelSpec.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tmc {

/// Bytes of one weight element of type `dtype` (4 for f32, 2 for f16/bf16).
int64_t bytesPerElement(DType dtype);

/// Counts that must be exact, hence 64-bit integers.
struct ModelSizes {
  int64_t parameters = 0;
  /// `parameters` split by where the tensors live: the embedding tables and
  /// embed_norm, each stack's layers and final_norm, the output head.
  int64_t embeddingParameters = 0, encoderParameters = 0, decoderParameters = 0,
          headParameters = 0;
  int64_t weightBytes = 0;
  /// The weights as the model computes with them, whatever `dtype` stores
  /// them as: the matrices of bf16 linears at 2 bytes an element, those of
  /// int8 linears at 1 plus 8 per output channel (an f32 scale and an int32
  /// correction), those of q4 linears at 18 per block of 32 along K per
  /// output channel (ceil(K/32) blocks; 16 bytes of 4-bit values and an f16
  /// scale), every other tensor (f32 linears, norms, biases, embedding
  /// tables, a tied head's table too, which the embedding reads) at 4.
  int64_t bf16WeightBytes = 0, int8WeightBytes = 0, q4WeightBytes = 0, f32WeightBytes = 0;
  /// Keys and values of every decoder layer at max_seq positions, as its
  /// kv_cache stores them (4 bytes an element in f32, 2 in f16 or bf16) (and,
  /// with cross-attention, of the encoder output they attend to); 0 for an
  /// encoder-only model, which does not decode.
  int64_t kvCacheBytes = 0;
};

/// The sizes of `spec`, or nullopt when one does not fit in 64 bits; then
/// `overflow` (if given) names it ("the parameter count", ...).
std::optional<ModelSizes> computeSizes(const ModelSpec &spec,
                                       std::string *overflow = nullptr);

/// FLOPs per token: 2 per multiply-accumulate of every matrix product.
struct FlopCounts {
  /// One forward pass over max_seq tokens (for an encoder-decoder model, a
  /// max_seq-token source and a max_seq-token target), divided by max_seq.
  double prefill = 0;
  /// One decoding step at the last position, max_seq - 1, with every earlier
  /// position cached; none for a model without a decoder.
  std::optional<double> decode;
  /// The part of `prefill` spent in each stack's layers and in the head.
  double encoderPrefill = 0, decoderPrefill = 0, headPrefill = 0;
  /// False when a mask was too costly to count row by row and the attention
  /// terms were extrapolated from a sample of rows (see MaskRows).
  bool exact = true;
};

/// The FLOP counts of `spec`.
FlopCounts countFlops(const ModelSpec &spec);

} // namespace tmc
