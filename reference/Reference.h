//===- Reference.h - A plain evaluator of the spec semantics -----*- C++ -*-===//
//
// The oracle every kernel and every compiled executable is checked against: a
// direct, unoptimized transcription of docs/spec-language.md in double
// precision. It reads a ModelSpec (never the syntax tree) and weights by their
// canonical names, and it keeps its own list of the tensors it reads
// (requiredTensors) rather than the compiler's manifest, so the two can be
// checked against each other; the only code it shares with the compiler is
// the checked spec (ModelSpec, per-layer overrides resolved). Mask rules
// (ReferenceMask.h) and f16/bf16 widening (ReferenceHalf.h) are its own.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Manifest.h"
#include "frontend/ModelSpec.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tmc::ref {

/// Returns the f32 data of a weight by canonical name, laid out row-major in
/// the shape requiredTensors() gives; nullptr if absent.
using WeightLookup = std::function<const float *(const std::string &name)>;

/// One run's input, for a single sequence (batch 1).
struct Inputs {
  /// The decoder's prompt, or the encoder's tokens in an encoder-only model.
  std::vector<int32_t> tokens;
  /// Encoder-decoder only: the encoder's input.
  std::vector<int32_t> sourceTokens;
  /// Segment ids of the sequence the model's first stack reads: `tokens` in a
  /// single-stack model, `sourceTokens` in an encoder-decoder one (whose
  /// decoder tokens are all segment 0). Empty: every id is 0.
  std::vector<int32_t> segments;
  /// Valid length of `tokens` (default: all). Keys at or past it are hidden by
  /// a `padding` mask term, and mean pooling averages positions before it.
  std::optional<int64_t> length;
  /// Valid length of `sourceTokens` (default: all): hides source keys at or
  /// past it from a `padding` term in the encoder and from cross-attention.
  std::optional<int64_t> sourceLength;
};

/// A named intermediate value of an evaluation, for `tmc verify`'s bisect.
/// Names follow the weights' (and the compiled ops' locations): "embed" (the
/// embedding's final value), "{stack}.layers.{i}.self_attn.q|k|v" (after rope),
/// ".attn" (heads concatenated), ".o"; "{...}.ffn.up" (after the activation
/// when not gated), ".gate", ".act" (act(gate) * up), ".down"; "{...}.normK"
/// (norm K's output) and "{...}.residualK" (the sum of sublayer K and its
/// input); "{stack}.final_norm"; "output"
/// (LM head) or "classifier".
struct Tap {
  std::string name;
  bool source = false; ///< computed over an encoder-decoder's source
  int64_t rows = 0, cols = 0;
  const std::vector<double> *data = nullptr; ///< row-major, valid during the call
};
using TapObserver = std::function<void(const Tap &)>;

/// Evaluates the spec's semantics directly, in double precision (every sum
/// accumulated in double). Returns [rows * outputWidth] row-major, where rows
/// is tokens.size(), or 1 for a classifier (its single row of class logits).
/// std::nullopt with *error set for what it does not model (f16/bf16
/// weights), specs it cannot make sense of (per-layer specs missing, linformer
/// over a mask that needs positions), or bad input (a missing weight, a token
/// out of range, too many tokens, lengths out of range).
std::optional<std::vector<double>> evaluate(const ModelSpec &spec,
                                            const WeightLookup &weights,
                                            const Inputs &inputs,
                                            std::string *error,
                                            const TapObserver &observer = nullptr);

/// The tensors evaluate() reads, with the shapes it indexes them by, as the
/// reference reads the contract's canonical names (compare buildManifest).
std::vector<TensorSpec> requiredTensors(const ModelSpec &spec);

/// Rows evaluate() returns for `tokens` tokens: 1 for a classifier.
int64_t outputRows(const ModelSpec &spec, int64_t tokens);

/// gelu, erf form: x/2 * (1 + erf(x / sqrt(2))).
double gelu(double x);
/// gelu, tanh approximation (PyTorch approximate="tanh").
double geluTanh(double x);
/// silu: x * sigmoid(x).
double silu(double x);
/// The sinusoidal position encoding PE(p, j) of a d_model-wide model.
double sinusoidal(int64_t position, int64_t dim, int64_t dModel);
/// ALiBi's slope of head `head` (from 0) of `heads`: 2^(-8 (head + 1) / heads).
double alibiSlope(int64_t head, int64_t heads);

} // namespace tmc::ref
