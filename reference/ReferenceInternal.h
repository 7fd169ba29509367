//===- ReferenceInternal.h - Pieces the evaluator's files share --*- C++ -*-===//
//
// Private to tests/reference: the matrix type, checked weight access and the
// attention entry point, split out so the model walk (Reference.cpp) and the
// attention arithmetic (ReferenceAttention.cpp) stay files of readable size.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/ModelSpec.h"
#include "reference/Reference.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tmc::ref::detail {

/// Why the reference cannot evaluate `spec` (a feature it does not model, or
/// values no checked spec has), or "" (ReferenceChecks.cpp).
std::string checkSpec(const ModelSpec &spec);

/// Why `inputs` do not fit `spec` (a checked one), or "".
std::string checkInputs(const ModelSpec &spec, const Inputs &inputs);

/// A row-major [rows, cols] matrix of doubles.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<double> data;

  Matrix() = default;
  Matrix(int64_t rows, int64_t cols)
      : rows(rows), cols(cols), data(static_cast<size_t>(rows * cols), 0.0) {}
  double &at(int64_t r, int64_t c) { return data[static_cast<size_t>(r * cols + c)]; }
  double at(int64_t r, int64_t c) const {
    return data[static_cast<size_t>(r * cols + c)];
  }
};

/// a + b, elementwise (same shapes).
Matrix add(const Matrix &a, const Matrix &b);

/// The weights of one evaluation, limited to requiredTensors(spec): every
/// read names a tensor and the element count it is about to index, so a read
/// the reference's own tensor list does not cover (a bug in this directory,
/// not in the input) is recorded instead of running off a buffer.
class WeightTable {
public:
  /// Fails (returns false, *error set) when `lookup` lacks a required tensor.
  bool load(const ModelSpec &spec, const WeightLookup &lookup, std::string *error);

  /// The tensor's data, `count` elements long. Never null: an unlisted name
  /// or a wrong count records failure() and yields zeros.
  const float *get(const std::string &name, int64_t count);

  /// Empty unless some get() did not match the tensor list.
  const std::string &failure() const { return firstFailure; }

private:
  struct Entry {
    const float *data = nullptr;
    int64_t count = 0;
  };
  std::map<std::string, Entry, std::less<>> entries;
  std::vector<std::vector<float>> zeroBuffers;
  std::string firstFailure;
};

/// y = x W^T (+ b) with W in nn.Linear layout [out, in]; b may be null.
/// Precision::BF16 rounds every element of x and W to bf16 first (the bias
/// stays f32), as tmc's bf16 GEMMs do; the sum is exact-ish in double.
/// Precision::Int8 quantizes W per output channel and x per row, in f32 as
/// docs/spec-language.md defines it, and sums the integer products exactly.
/// Precision::Q4 quantizes W per block of 32 along K as ggml's Q4_0 (f16
/// scales) and x per row as Int8 does, sums each block's integer products
/// exactly and the scaled blocks in double.
Matrix linear(const Matrix &x, const float *w, const float *b, int64_t out,
              Precision precision = Precision::F32);

/// One row of a weight [out, in] (`count` = in values) as linear() under
/// `precision` multiplies it, in f32: bf16 rounded; int8 q times the row's
/// scale (an f32 product); q4 each block's (q - 8) times its f16 scale.
/// What a tied head's table lookup reads.
std::vector<float> dequantizedRow(const float *row, int64_t count, Precision precision);

/// linear() with W at `prefix`.weight and, if `bias`, b at `prefix`.bias.
Matrix linear(WeightTable &weights, const Matrix &x, const std::string &prefix,
              int64_t out, bool bias, Precision precision = Precision::F32);

/// What one attention call attends over and how.
struct AttentionSite {
  const LayerSpec *layer = nullptr;
  /// The decoder's conventions: its window shape and the one-sided alibi.
  bool decoder = false;
  /// Cross-attention: keys are the encoder's output, masked only past
  /// `keyLength`; no mask terms, no rope, no alibi, no linformer.
  bool cross = false;
  /// The key sequence's valid length: what a `padding` term (and linformer
  /// under one) hides keys past; cross-attention always hides them.
  int64_t keyLength = 0;
  /// `{stack}.layers.{i}`, for linformer's attn_proj tensors.
  std::string layerPrefix;
  /// Receives the named intermediates (q, k, v after rope, the heads'
  /// concatenation as `.attn`, the projection as `.o`); `source` marks those
  /// computed over an encoder-decoder's source (cross-attention keys, values).
  std::function<void(const std::string &name, bool source, const Matrix &value)> tap;
};

/// Multi-head attention of `queries` over `keys` (the same matrix for
/// self-attention), o projection included. Weights under `prefix`
/// (`...self_attn` or `...cross_attn`).
Matrix attention(WeightTable &weights, const ModelSpec &spec,
                 const AttentionSite &site, const std::string &prefix,
                 const Matrix &queries, const Matrix &keys);

} // namespace tmc::ref::detail
