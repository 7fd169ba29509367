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
#include <vector>

namespace tmc {

enum class PositionKind { None, Sinusoidal, Learned, Rope, Alibi };
enum class NormKind { LayerNorm, RMSNorm };
enum class NormPlacement { Post, Pre };
enum class Activation { Relu, Gelu, GeluTanh, Silu, SwiGLU, GeGLU };
enum class OutputKind { Hidden, LMHead, Classifier };
enum class DType { F32, F16, BF16 };
/// How the GEMMs of linear layers multiply (`precision = ...`), apart from
/// `dtype`, the storage type of the weights file. bf16: the weights are
/// packed as bf16 at load, activations are rounded to bf16 inside the GEMM
/// and the products are summed in f32. int8: the weights are quantized per
/// output channel (symmetric, scale max|w|/127) at load, each token row's
/// activations per row the same way inside the GEMM, and the products summed
/// exactly in int32 (docs/spec-language.md has the arithmetic). q4: ggml's
/// Q4_0, the weights quantized at load in blocks of 32 along K to 4 bits
/// with an f16 scale per block, the activations per row as int8 does (without
/// its unsigned shift), each block's products summed exactly in int32 and
/// scaled in f32. Everything else stays f32.
enum class Precision { F32, BF16, Int8, Q4 };
/// How a decoder layer's key and value caches store their rows (`kv_cache =
/// ...`): f32, or each value rounded to IEEE 754 binary16 (f16) or bfloat16
/// (bf16), ties to even, as its row is appended; attention widens them back to
/// f32 as it reads them. Every read of a cached key or value, the prompt's own
/// included, sees the rounded row, so a prompt and the decoding steps after it
/// agree. An encoder keeps no cache.
enum class CachePrecision { F32, F16, BF16 };

struct NormSpec {
  NormKind kind = NormKind::LayerNorm;
  double eps = 1e-5;
  llvm::SMLoc loc;
};

enum class MaskKind { Causal, Padding, SlidingWindow, DilatedWindow, Global, Random };

/// One term of a `mask = a + b + ...` sum.
struct MaskTerm {
  MaskKind kind = MaskKind::Causal;
  int64_t size = 0;             ///< sliding_window / dilated_window: W
  int64_t dilation = 1;         ///< dilated_window: D
  std::vector<int64_t> tokens;  ///< global: the positions
  int64_t perRow = 0;           ///< random: R keys per query
  uint64_t seed = 0;            ///< random: S
  llvm::SMLoc loc;
};

/// A self-attention mask; no terms is `none`. Semantics (frontend/Masks.h):
/// the union of what the window/global/random terms allow (everything when
/// there are none of them), restricted by causal and padding.
struct MaskSpec {
  std::vector<MaskTerm> terms;
  llvm::SMLoc loc;

  const MaskTerm *find(MaskKind kind) const {
    for (const MaskTerm &term : terms)
      if (term.kind == kind)
        return &term;
    return nullptr;
  }
  bool has(MaskKind kind) const { return find(kind) != nullptr; }
  bool none() const { return terms.empty(); }
};

enum class AttentionKind { Full, Linformer };

/// The keys of a stack that a `layers A..B { }` block may override, as they
/// hold for one layer. A StackSpec carries the stack-wide values (its base)
/// and the effective values of every layer.
struct LayerSpec {
  int64_t heads = 0;
  int64_t kvHeads = 0;  // == heads unless grouped-query
  int64_t headDim = 0;  // d_model / heads unless given
  int64_t dFF = 0;      // 4 * d_model unless given
  Activation ffn = Activation::Relu;
  NormPlacement placement = NormPlacement::Post;
  NormSpec norm;
  bool bias = true;
  MaskSpec mask;
  AttentionKind attention = AttentionKind::Full;
  int64_t linformerK = 0; ///< linformer: rows keys and values are projected to
  /// Of every linear of the layer (q/k/v/o, cross-attention, FFN); the
  /// stack's, else the model's, unless the layer sets its own.
  Precision precision = Precision::F32;
  /// Of the layer's key/value caches (a decoder layer's self-attention and
  /// cross-attention); the stack's, else the model's, unless the layer sets it.
  CachePrecision kvCache = CachePrecision::F32;
  // Locations of the keys, for diagnostics and op locations further down.
  llvm::SMLoc attentionLoc, ffnLoc, normLoc, maskLoc, precisionLoc, kvCacheLoc;
};

/// One `encoder { }` or `decoder { }` block. Its LayerSpec base holds the
/// stack-wide values; `layerSpecs[i]` holds layer i's, overrides applied.
struct StackSpec : LayerSpec {
  bool present = false;
  llvm::SMLoc loc;
  int64_t layers = 0;
  std::optional<NormSpec> finalNorm;
  /// Attends to the encoder's output (only in the decoder of an
  /// encoder-decoder model).
  bool crossAttention = false;
  std::vector<LayerSpec> layerSpecs; ///< size == layers

  const LayerSpec &layer(int64_t i) const { return layerSpecs[static_cast<size_t>(i)]; }
};

enum class Pooling { First, Mean };

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
  bool tiedHead = true;        ///< lm_head(tied = ...)
  bool headBias = false;       ///< lm_head(bias = ...)
  int64_t classes = 0;         ///< classifier(classes = N)
  Pooling pool = Pooling::First; ///< classifier(pool = first|mean)
  /// classifier(pooler = true): BERT's pooler, a linear layer d_model ->
  /// d_model with tanh, between the pooled row and the classifier.
  bool pooler = false;
  DType dtype = DType::F32;
  /// The model's default, which stacks and layers inherit, and the precision
  /// of the output head (LM head or classifier).
  Precision precision = Precision::F32;
  /// The model's default for the decoder's caches.
  CachePrecision kvCache = CachePrecision::F32;
  /// `weights = huggingface(FAMILY)`: the executable reads a Hugging Face
  /// checkpoint of that family ("gpt2", "bert", "llama"); empty: tmc's
  /// canonical names.
  std::string weightScheme;
  StackSpec encoder;
  StackSpec decoder;
  llvm::SMLoc positionLoc, outputLoc, precisionLoc, kvCacheLoc;

  bool isEncoderDecoder() const { return encoder.present && decoder.present; }
  /// Width of the tensor the executable returns per position.
  int64_t outputWidth() const {
    switch (output) {
    case OutputKind::LMHead: return vocab;
    case OutputKind::Classifier: return classes;
    case OutputKind::Hidden: break;
    }
    return dModel;
  }
};

const char *toString(PositionKind kind);
const char *toString(Activation kind);
const char *toString(NormKind kind);
const char *toString(NormPlacement placement);
const char *toString(MaskKind kind);
const char *toString(Precision precision); ///< "f32", "bf16", "int8", "q4"
/// The inverse of toString(Precision); nullopt for any other text.
std::optional<Precision> parsePrecision(const std::string &text);
const char *toString(CachePrecision precision); ///< "f32", "f16", "bf16"
/// The inverse of toString(CachePrecision); nullopt for any other text.
std::optional<CachePrecision> parseCachePrecision(const std::string &text);

/// What the command line changes in a spec as it is checked (`tmc compile
/// --precision=bf16`): applied in Sema, before the stacks inherit, so that a
/// stack's or layer's own key still wins.
struct SpecOverrides {
  std::optional<Precision> precision; ///< replaces the model-level `precision`
  std::optional<CachePrecision> kvCache; ///< replaces the model-level `kv_cache`
};

} // namespace tmc
