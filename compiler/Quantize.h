//===- Quantize.h - Weights files stored as the kernels multiply them -*- C++ -*-===//
//
// `tmc quantize` writes a model's weights file with every linear weight that
// its kernels read packed in bf16, int8 or q4 already in that form
// (docs/spec-language.md, "Quantized weight files"): a smaller file, loaded
// without quantizing at start-up. The arithmetic is the pack kernels' own
// (compiler/halide/LowerPack.cpp), bit for bit, so that an executable packs
// the same bytes from this file as from the f32 one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"
#include "frontend/Manifest.h"
#include "runtime/tmr_abi.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmc {

/// One tensor of a quantized weights file, as the file holds it.
struct StoredTensor {
  std::string name;
  std::vector<int64_t> shape;
  tmr_dtype dtype = TMR_F32;
  int64_t source = 0;   ///< the manifest tensor it comes from
  std::string storage;  ///< quantizedStorage's entry for it: "", "bf16", "int8", "q4"
  bool isScale = false; ///< NAME.scale, after NAME
};

/// The tensors of the quantized file, in its order: every manifest tensor,
/// each quantized one followed by its NAME.scale (int8, q4). `storage` is
/// quantizedStorage(plan) (compiler/PreparedWeights.h); an entry other than
/// "" for a tensor that is not a matrix is an error.
llvm::Expected<std::vector<StoredTensor>> quantizedLayout(const std::vector<TensorSpec> &manifest,
                                                          const std::vector<std::string> &storage);

/// The int8 quantization of one output channel (a row of K weights):
/// q[0..K) and its scale.
void quantizeInt8Row(const float *row, int64_t K, int8_t *q, float *scale);

/// The q4 quantization (ggml's Q4_0) of one output channel: ceil(K / 32)
/// blocks of 16 nibble-pair bytes at `nibbles` and their f16 scales' bits.
void quantizeQ4Row(const float *row, int64_t K, uint8_t *nibbles, uint16_t *scales);

/// What quantizeWeightsFile did.
struct QuantizeSummary {
  int64_t tensors = 0; ///< manifest tensors written
  int64_t int8 = 0, q4 = 0, bf16 = 0;
  uint64_t inputBytes = 0, outputBytes = 0; ///< the files' sizes
  /// One line per quantized tensor holding NaN or infinities (naming it,
  /// and any non-finite scale it got), and per q4 tensor whose scale
  /// overflowed f16; the caller prints them as warnings.
  std::vector<std::string> warnings;
  int64_t quantized() const { return int8 + q4 + bf16; }
};

/// Reads `input` (checked against the plan's manifest as an executable
/// checks it: each problem names the tensor, expected against actual),
/// quantizes what quantizedStorage(plan) says and writes `output`
/// atomically. The caller has made sure that `output` is not `input`.
llvm::Expected<QuantizeSummary>
quantizeWeightsFile(const KernelPlan &plan, const std::string &input, const std::string &output);

} // namespace tmc
