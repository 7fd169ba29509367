//===- ReferenceTestUtil.h - Hand-built models for the oracle's tests -*- C++ -*-===//
//
// Weight stores, spec builders and the "probe" model shared by the reference
// tests. The probe makes attention weights visible: token t embeds as the
// one-hot e_t, a pre rmsnorm (eps 0, gain 2/sqrt(width)) turns it into 2 e_t, q = k = 0 makes
// scores depend on the mask (and position bias) alone, and v = o = identity
// copies the weights into the output, so with tokens 0, 1, .., T-1:
//   out[i][j] = [i == j] + 2 * weight(i, j).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "reference/Reference.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tmc::reftest {

/// Hand-built specs set only each stack's base; as Sema does without layer
/// overrides, copy it to every layer, unless the test set layerSpecs itself.
ModelSpec resolveLayers(ModelSpec spec);

/// Every tensor the reference reads, zero-filled until a test sets it.
class WeightStore {
public:
  explicit WeightStore(const ModelSpec &spec);

  /// Replaces a tensor's values; the tensor must exist with that size.
  void set(const std::string &name, std::vector<float> values);
  /// Fills every tensor with deterministic values in [-scale, scale].
  void randomize(uint64_t seed, float scale = 0.5f);
  /// Adds a tensor the spec does not need (to prove it is never read).
  void setExtra(const std::string &name, std::vector<float> values);
  void erase(const std::string &name) { tensors.erase(name); }
  const std::vector<float> &get(const std::string &name) const;
  bool has(const std::string &name) const { return tensors.count(name) != 0; }

  ref::WeightLookup lookup() const;

private:
  std::map<std::string, std::vector<float>> tensors;
};

/// `count` x `count` identity, row-major.
std::vector<float> identity(int64_t count);

/// Inputs with just these tokens.
ref::Inputs tokensOnly(std::vector<int32_t> tokens);

/// Evaluates (after resolveLayers), expecting success and the documented size.
std::vector<double> run(const ModelSpec &spec, const WeightStore &weights,
                        const ref::Inputs &inputs);
std::vector<double> run(const ModelSpec &spec, const WeightStore &weights,
                        const std::vector<int32_t> &tokens);

/// Evaluates (after resolveLayers), expecting failure; returns the message.
std::string evaluateError(const ModelSpec &spec, const WeightStore &weights,
                          const ref::Inputs &inputs);

void expectNear(const std::vector<double> &actual, const std::vector<double> &expected,
                double tolerance);

/// A one-layer encoder with `position = none` and no norms around the stack.
ModelSpec tinySpec(int64_t dModel, int64_t heads, int64_t headDim);
/// Pre placement with every sublayer weight zero: each block adds only its
/// o / down biases, so the output is the embedding (plus those biases).
ModelSpec passThroughSpec(int64_t dModel);

/// The probe model (see the banner): `width` tokens and dims, one layer in an
/// encoder or a decoder, `heads` heads of width / heads, no biases.
ModelSpec probeSpec(bool decoder, int64_t width, int64_t heads = 1);
/// The probe's weights: v = o = identity, norm1 = 2 / sqrt(width) (so that
/// it maps e_t to 2 e_t), the rest zero.
WeightStore probeWeights(const ModelSpec &spec);
/// 0, 1, .., count-1.
std::vector<int32_t> iota(int64_t count);
/// What the probe returns for uniform attention over a pattern of rows like
/// "1.1." (row i: which keys query i sees); a row of dots gives e_i alone.
std::vector<double> probeExpected(const std::vector<std::string> &pattern, int64_t width);

} // namespace tmc::reftest
