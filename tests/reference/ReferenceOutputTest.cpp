//===- ReferenceOutputTest.cpp - Heads, linformer, per-layer specs --------===//
//
// Output heads checked against the hidden states the same model returns
// under `output = hidden` (a head is a plain function of them), linformer
// against the probe model's spelled-out weights, layer overrides by models
// whose every layer must read its own LayerSpec, and the reference's tensor
// list against the compiler's manifest.
//
//===----------------------------------------------------------------------===//

#include "tests/reference/ReferenceTestUtil.h"

#include "frontend/Manifest.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tmc;
using namespace tmc::reftest;

namespace {

MaskTerm termOf(MaskKind kind) {
  MaskTerm t;
  t.kind = kind;
  return t;
}

/// A small encoder with random weights: post layernorm, two layers, padding.
ModelSpec encoderSpec() {
  ModelSpec spec = tinySpec(4, 2, 2);
  spec.vocab = 6;
  spec.position = PositionKind::Learned;
  spec.encoder.layers = 2;
  spec.encoder.dFF = 5;
  spec.encoder.ffn = Activation::Gelu;
  spec.encoder.mask.terms = {termOf(MaskKind::Padding)};
  return spec;
}

/// logits[r][v] = sum_j h[r][j] w[v][j] (+ b[v]).
std::vector<double> project(const std::vector<double> &h, int64_t width,
                            const std::vector<float> &w, const std::vector<float> *b) {
  int64_t rows = static_cast<int64_t>(h.size()) / width;
  int64_t out = static_cast<int64_t>(w.size()) / width;
  std::vector<double> logits;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < out; ++v) {
      double sum = b ? (*b)[v] : 0.0;
      for (int64_t j = 0; j < width; ++j)
        sum += h[r * width + j] * w[v * width + j];
      logits.push_back(sum);
    }
  return logits;
}

TEST(ReferenceHeads, TiedLMHeadIsHiddenTimesTokenTable) {
  ModelSpec hidden = encoderSpec();
  ModelSpec lm = hidden;
  lm.output = OutputKind::LMHead;
  WeightStore weights(lm);
  weights.randomize(8);
  auto h = run(hidden, weights, {1, 5, 2});
  auto logits = run(lm, weights, {1, 5, 2});
  ASSERT_EQ(logits.size(), 3u * 6u); // every position, vocab wide
  expectNear(logits, project(h, 4, weights.get("embed.tokens"), nullptr), 1e-12);
}

TEST(ReferenceHeads, UntiedLMHeadWithBias) {
  ModelSpec hidden = encoderSpec();
  ModelSpec lm = hidden;
  lm.output = OutputKind::LMHead;
  lm.tiedHead = false;
  lm.headBias = true;
  WeightStore weights(lm);
  weights.randomize(9);
  auto h = run(hidden, weights, {0, 3});
  const std::vector<float> &bias = weights.get("output.bias");
  expectNear(run(lm, weights, {0, 3}), project(h, 4, weights.get("output.weight"), &bias),
             1e-12);
}

TEST(ReferenceHeads, ClassifierPoolsTheFirstPosition) {
  ModelSpec hidden = encoderSpec();
  ModelSpec cls = hidden;
  cls.output = OutputKind::Classifier;
  cls.classes = 3;
  cls.pool = Pooling::First;
  WeightStore weights(cls);
  weights.randomize(10);
  auto h = run(hidden, weights, {4, 1, 2});
  std::vector<double> first(h.begin(), h.begin() + 4);
  const std::vector<float> &bias = weights.get("classifier.bias");
  auto logits = run(cls, weights, {4, 1, 2});
  ASSERT_EQ(logits.size(), 3u); // one row of class logits
  expectNear(logits, project(first, 4, weights.get("classifier.weight"), &bias), 1e-12);
}

TEST(ReferenceHeads, ClassifierMeanPoolsUnpaddedPositions) {
  ModelSpec hidden = encoderSpec();
  ModelSpec cls = hidden;
  cls.output = OutputKind::Classifier;
  cls.classes = 2;
  cls.pool = Pooling::Mean;
  WeightStore weights(cls);
  weights.randomize(12);
  ref::Inputs inputs = tokensOnly({4, 1, 2, 0, 0});
  inputs.length = 3;
  auto h = run(hidden, weights, inputs);
  std::vector<double> mean(4, 0.0);
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 4; ++j)
      mean[j] += h[r * 4 + j] / 3.0;
  const std::vector<float> &bias = weights.get("classifier.bias");
  expectNear(run(cls, weights, inputs),
             project(mean, 4, weights.get("classifier.weight"), &bias), 1e-12);
}

/// The probe (encoder, 4 tokens of 4 dims) with linformer k = 2 and
/// E_k, E_v as [2, max_seq = 4] matrices.
struct LinformerProbe {
  ModelSpec spec;
  WeightStore weights;
  std::vector<float> ek = {0.5f, -1, 2, 3, 1, 0.25f, -2, 7};
  std::vector<float> ev = {1, 2, 3, 4, 5, 6, 7, 8};
  float qScale = 1.5f;

  LinformerProbe() : spec(makeSpec()), weights(probeWeights(spec)) {
    weights.set("encoder.layers.0.attn_proj.k.weight", ek);
    weights.set("encoder.layers.0.attn_proj.v.weight", ev);
    std::vector<float> q = identity(4);
    for (float &value : q)
      value *= qScale;
    weights.set("encoder.layers.0.self_attn.q.weight", q);
    weights.set("encoder.layers.0.self_attn.k.weight", identity(4));
  }

  static ModelSpec makeSpec() {
    ModelSpec spec = probeSpec(false, 4);
    spec.encoder.attention = AttentionKind::Linformer;
    spec.encoder.linformerK = 2;
    return spec;
  }

  /// By hand: q_i = 2 qScale e_i, K' = E_k[:, :L] (2 e_t)_t, so the score of
  /// projected row r is 2 qScale * 2 E_k[r][i] / sqrt(4); V' row r is
  /// 2 E_v[r][t] on dim t < L. Output: e_i + sum_r w_ir V'_r.
  std::vector<double> expected(int64_t count, int64_t valid) const {
    std::vector<double> out;
    for (int64_t i = 0; i < count; ++i) {
      double s[2], total = 0;
      for (int r = 0; r < 2; ++r) {
        double score = i < valid ? 2.0 * qScale * 2.0 * ek[r * 4 + i] / 2.0 : 0.0;
        s[r] = std::exp(score);
        total += s[r];
      }
      for (int64_t t = 0; t < 4; ++t) {
        double value = i == t ? 1.0 : 0.0;
        for (int r = 0; r < 2; ++r)
          value += s[r] / total * (t < valid ? 2.0 * ev[r * 4 + t] : 0.0);
        out.push_back(value);
      }
    }
    return out;
  }
};

TEST(ReferenceLinformer, ProjectsKeysAndValuesWithTheFirstTColumns) {
  LinformerProbe probe;
  expectNear(run(probe.spec, probe.weights, iota(3)), probe.expected(3, 3), 1e-9);
}

TEST(ReferenceLinformer, PaddingDropsColumnsPastTheLength) {
  LinformerProbe probe;
  probe.spec.encoder.mask.terms = {termOf(MaskKind::Padding)};
  ref::Inputs inputs = tokensOnly(iota(4));
  inputs.length = 2;
  // Padded queries still attend (their own q meets the projected keys).
  auto out = run(probe.spec, probe.weights, inputs);
  std::vector<double> expected = probe.expected(4, 2);
  // Rows 2, 3 have q = 2 qScale e_i, but K' only holds positions 0, 1.
  for (int i = 2; i < 4; ++i)
    for (int t = 0; t < 4; ++t)
      expected[i * 4 + t] = (i == t ? 1.0 : 0.0) + (t < 2 ? (probe.ev[t] + probe.ev[4 + t]) : 0);
  expectNear(out, expected, 1e-9);
}

TEST(ReferenceLinformer, MasksNamingPositionsAreRefused) {
  LinformerProbe probe;
  probe.spec.encoder.mask.terms = {termOf(MaskKind::Causal)};
  EXPECT_NE(evaluateError(probe.spec, probe.weights, tokensOnly({0})).find("linformer"),
            std::string::npos);
}

TEST(ReferenceLayers, EachLayerReadsItsOwnSpec) {
  // The base says relu, d_ff 2, biases, no mask; layer 1 overrides all four
  // (silu, d_ff 3, no biases, causal). Reading the base for layer 1 would
  // read a wrong-sized ffn (an internal error), stray biases, or no mask.
  ModelSpec spec = passThroughSpec(2);
  spec.encoder.layers = 2;
  spec = resolveLayers(spec);
  LayerSpec &second = spec.encoder.layerSpecs[1];
  second.ffn = Activation::Silu;
  second.dFF = 3;
  second.bias = false;
  second.mask.terms = {termOf(MaskKind::Causal)};
  WeightStore weights(spec);
  weights.set("embed.tokens", {1, 0, 0, 1, 0, 0, 0, 0});
  weights.setExtra("encoder.layers.1.ffn.down.bias", {1000, 1000});
  // Layer 0: zero sublayers (all biases 0). Layer 1: attention averages the
  // visible rows (q = k = 0, v = o = identity after a layernorm that maps
  // [1, 0] to [1, -1] and [0, 1] to [-1, 1]), then the ffn adds silu(1).
  weights.set("encoder.layers.1.norm1.weight", {1, 1});
  weights.set("encoder.layers.1.self_attn.v.weight", identity(2));
  weights.set("encoder.layers.1.self_attn.o.weight", identity(2));
  weights.set("encoder.layers.1.norm2.bias", {1, 1});
  weights.set("encoder.layers.1.ffn.up.weight", {1, 0, 0, 1, 0, 0});
  weights.set("encoder.layers.1.ffn.down.weight", {1, 0, 0, 0, 0, 0});
  auto out = run(spec, weights, {0, 1});
  double a = 0.5 / std::sqrt(0.25 + 1e-5); // layernorm([1, 0]) = [a, -a]
  double s = ref::silu(1.0);
  // Row 0 sees itself only (causal); row 1 sees both, which average to 0.
  expectNear(out, {1 + a + s, -a, 0 + s, 1}, 1e-9);
}

/// Specs covering every tensor family, for the tensor-list comparison.
std::vector<ModelSpec> coverageSpecs() {
  std::vector<ModelSpec> specs;
  ModelSpec bert = encoderSpec();
  bert.segments = 2;
  bert.embedNorm = NormSpec{};
  bert.output = OutputKind::Classifier;
  bert.classes = 3;
  specs.push_back(bert);

  ModelSpec llama = tinySpec(8, 4, 2);
  llama.encoder = StackSpec{};
  llama.decoder = tinySpec(8, 4, 2).encoder;
  llama.decoder.kvHeads = 2;
  llama.decoder.ffn = Activation::SwiGLU;
  llama.decoder.bias = false;
  llama.decoder.norm = NormSpec{NormKind::RMSNorm, 1e-6, {}};
  llama.decoder.finalNorm = NormSpec{NormKind::RMSNorm, 1e-6, {}};
  llama.output = OutputKind::LMHead;
  llama.tiedHead = false;
  llama.headBias = true;
  specs.push_back(llama);

  ModelSpec t5 = tinySpec(4, 2, 2);
  t5.decoder = t5.encoder;
  t5.decoder.crossAttention = true;
  t5.encoder.finalNorm = NormSpec{};
  t5.shareEmbeddings = false;
  t5.output = OutputKind::LMHead;
  specs.push_back(t5);

  ModelSpec lin = LinformerProbe::makeSpec();
  lin.encoder.layers = 2;
  specs.push_back(lin);
  for (ModelSpec &spec : specs)
    spec = resolveLayers(spec);
  return specs;
}

TEST(ReferenceTensors, AgreeWithTheManifest) {
  for (const ModelSpec &spec : coverageSpecs()) {
    std::map<std::string, std::vector<int64_t>> ours, manifest;
    for (const TensorSpec &tensor : ref::requiredTensors(spec))
      ours[tensor.name] = tensor.shape;
    for (const TensorSpec &tensor : buildManifest(spec))
      manifest[tensor.name] = tensor.shape;
    for (const auto &[name, shape] : ours)
      EXPECT_TRUE(manifest.count(name) && manifest[name] == shape)
          << "the reference reads '" << name << "' that the manifest of "
          << spec.name << " lacks or shapes differently";
    for (const auto &[name, shape] : manifest)
      EXPECT_TRUE(ours.count(name)) << "the manifest of " << spec.name << " lists '"
                                    << name << "', which the reference never reads";
  }
}

} // namespace
