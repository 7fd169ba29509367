//===- ModelSpec.h - A checked, fully defaulted model description -*- C++ -*-===//
//
// What a spec means once every key is checked and every default applied. Every
// later stage (manifest, MLIRGen, the reference evaluator, `tmc check`) reads
// this struct and never the syntax tree, so one set of rules lives in Sema.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tmc {

enum class PositionKind { None, Sinusoidal, Learned, Rope, Alibi };
enum class NormKind { LayerNorm, RMSNorm };
enum class NormPlacement { Post, Pre };
enum class Activation { Relu, Gelu, GeluTanh, Silu, SwiGLU, GeGLU };
enum class OutputKind { Hidden, LMHead, Classifier };
enum class DType { F32, F16, BF16 };

struct NormSpec {
  NormKind kind = NormKind::LayerNorm;
  double eps = 1e-5;
  llvm::SMLoc loc;
};

/// One `encoder { }` or `decoder { }` block.
struct StackSpec {
  bool present = false;
  llvm::SMLoc loc;
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t kvHeads = 0;  // == heads unless grouped-query
  int64_t headDim = 0;  // d_model / heads unless given
  int64_t dFF = 0;      // 4 * d_model unless given
  Activation ffn = Activation::Relu;
  NormPlacement placement = NormPlacement::Post;
  NormSpec norm;
  std::optional<NormSpec> finalNorm;
  bool bias = true;
  /// Attends to the encoder's output (only in the decoder of an
  /// encoder-decoder model).
  bool crossAttention = false;
  // Locations of the keys, for diagnostics and op locations further down.
  llvm::SMLoc attentionLoc, ffnLoc, normLoc;
};

struct ModelSpec {
  std::string name;
  llvm::SMLoc loc;
  int64_t vocab = 0;
  int64_t dModel = 0;
  int64_t maxSeq = 0;
  PositionKind position = PositionKind::Sinusoidal;
  double ropeTheta = 10000.0;
  bool embedScale = false;
  std::optional<NormSpec> embedNorm;
  int64_t segments = 0;
  bool shareEmbeddings = true; // encoder-decoder: one token table for both
  OutputKind output = OutputKind::Hidden;
  DType dtype = DType::F32;
  StackSpec encoder;
  StackSpec decoder;
  llvm::SMLoc positionLoc, outputLoc;

  /// Width of the tensor the executable returns per position.
  int64_t outputWidth() const { return dModel; }
};

const char *toString(PositionKind kind);
const char *toString(Activation kind);
const char *toString(NormKind kind);
const char *toString(NormPlacement placement);

} // namespace tmc
