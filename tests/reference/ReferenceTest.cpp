//===- ReferenceTest.cpp - The oracle checked against hand-derived answers ===//
//
// Each case builds a model whose output can be worked out on paper (identity
// projections, identical rows that make softmax uniform, zeroed sublayers that
// leave a bare norm or embedding) so the expected numbers owe nothing to the
// evaluator's own code. Weights are chosen so that a plausible mistake (wrong
// GQA mapping, sqrt(d_model/heads) instead of sqrt(head_dim), unbiased
// variance, reading a bias under bias = false) changes the answer.
//
//===----------------------------------------------------------------------===//

#include "tests/reference/ReferenceTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tmc;
using namespace tmc::reftest;

namespace {

TEST(ReferenceMath, ActivationsMatchPublishedValues) {
  EXPECT_NEAR(ref::gelu(1.0), 0.841344746, 1e-9);
  EXPECT_NEAR(ref::gelu(-0.5), -0.154268769, 1e-9);
  EXPECT_NEAR(ref::geluTanh(1.0), 0.841191990, 1e-9);
  EXPECT_NEAR(ref::silu(1.0), 0.731058579, 1e-9);
  EXPECT_NEAR(ref::silu(-0.5), -0.188770334, 1e-9);
}

TEST(ReferenceMath, SinusoidalAtPositionOne) {
  // d = 4: frequencies 1 and 1/10000^(2/4) = 1/100.
  EXPECT_NEAR(ref::sinusoidal(1, 0, 4), 0.841470985, 1e-9);
  EXPECT_NEAR(ref::sinusoidal(1, 1, 4), 0.540302306, 1e-9);
  EXPECT_NEAR(ref::sinusoidal(1, 2, 4), 0.009999833, 1e-9);
  EXPECT_NEAR(ref::sinusoidal(1, 3, 4), 0.999950000, 1e-9);
  EXPECT_DOUBLE_EQ(ref::sinusoidal(0, 0, 4), 0.0);
  EXPECT_DOUBLE_EQ(ref::sinusoidal(0, 1, 4), 1.0);
}

TEST(ReferenceEmbedding, SinusoidalPositionsAreAdded) {
  ModelSpec spec = passThroughSpec(4);
  spec.position = PositionKind::Sinusoidal;
  WeightStore weights(spec);
  weights.set("embed.tokens", {0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0});
  auto out = run(spec, weights, {1, 1});
  expectNear(out,
             {1.0, 2.0, 1.0, 2.0, //
              1.841470985, 1.540302306, 1.009999833, 1.999950000},
             1e-6);
}

TEST(ReferenceEmbedding, LearnedPositionsScaleAndSegmentZero) {
  ModelSpec spec = passThroughSpec(4);
  spec.position = PositionKind::Learned;
  spec.embedScale = true;
  spec.segments = 2;
  WeightStore weights(spec);
  std::vector<float> table(16, 0.0f);
  for (int j = 0; j < 4; ++j)
    table[2 * 4 + j] = static_cast<float>(j + 1); // token 2 = [1, 2, 3, 4]
  weights.set("embed.tokens", table);
  std::vector<float> positions(8 * 4, 0.0f);
  positions[0] = 0.5f;      // position 0, dim 0
  positions[4 + 3] = -1.0f; // position 1, dim 3
  weights.set("embed.positions", positions);
  // Only row 0 may be added: no segment ids are given.
  weights.set("embed.segments", {0.25f, 0, 0, 0, 100, 100, 100, 100});
  auto out = run(spec, weights, {2, 2});
  // sqrt(4) * [1, 2, 3, 4] + position row + segment row 0.
  expectNear(out, {2.75, 4, 6, 8, 2.25, 4, 6, 7}, 1e-12);
}

TEST(ReferenceNorm, LayerNormOfKnownVector) {
  ModelSpec spec = passThroughSpec(4);
  spec.encoder.finalNorm = NormSpec{NormKind::LayerNorm, 1e-5, {}};
  WeightStore weights(spec);
  weights.set("embed.tokens", {1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  weights.set("encoder.final_norm.weight", {1, 1, 2, 1});
  weights.set("encoder.final_norm.bias", {0, 0, 0, 0.5});
  auto out = run(spec, weights, {0});
  // mean 2.5, biased variance 1.25 (the unbiased one would be 5/3).
  double inv = 1.0 / std::sqrt(1.25 + 1e-5);
  expectNear(out, {-1.5 * inv, -0.5 * inv, 2 * 0.5 * inv, 1.5 * inv + 0.5},
             1e-12);
}

TEST(ReferenceNorm, RMSNormOfKnownVector) {
  ModelSpec spec = passThroughSpec(4);
  spec.embedNorm = NormSpec{NormKind::RMSNorm, 1e-6, {}};
  WeightStore weights(spec);
  weights.set("embed.tokens", {1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  weights.set("embed.norm.weight", {1, 1, 1, 2});
  auto out = run(spec, weights, {0});
  double inv = 1.0 / std::sqrt(7.5 + 1e-6); // mean(x^2) = 30 / 4
  expectNear(out, {inv, 2 * inv, 3 * inv, 8 * inv}, 1e-12);
}

TEST(ReferenceAttention, PostNormOverIdenticalRows) {
  // Identical rows make softmax uniform whatever q and k are, so attention
  // returns v exactly; v = o = identity gives attn(x) = x.
  ModelSpec spec = tinySpec(2, 1, 2);
  WeightStore weights(spec);
  weights.set("embed.tokens", {1, 3, 0, 0, 0, 0, 0, 0});
  weights.set("encoder.layers.0.self_attn.q.weight", {0.3f, -1.2f, 0.7f, 2.0f});
  weights.set("encoder.layers.0.self_attn.k.weight", {1.1f, 0.4f, -0.9f, 0.2f});
  weights.set("encoder.layers.0.self_attn.v.weight", {1, 0, 0, 1});
  weights.set("encoder.layers.0.self_attn.o.weight", {1, 0, 0, 1});
  weights.set("encoder.layers.0.norm1.weight", {1, 1});
  weights.set("encoder.layers.0.ffn.down.bias", {0.5f, -0.25f});
  weights.set("encoder.layers.0.norm2.weight", {2, 3});
  weights.set("encoder.layers.0.norm2.bias", {0.1f, 0.2f});
  auto out = run(spec, weights, {0, 0, 0});

  // norm1([2, 6]) = [-2, 2] / sqrt(4 + eps); the ffn adds only its down bias.
  double a = 2.0 / std::sqrt(4.0 + 1e-5);
  double h0 = -a + 0.5, h1 = a - 0.25;
  double mean = (h0 + h1) / 2, c = h1 - mean;
  double n = c / std::sqrt(c * c + 1e-5);
  std::vector<double> row = {-2 * n + 0.1, 3 * n + 0.2};
  expectNear(out, {row[0], row[1], row[0], row[1], row[0], row[1]}, 1e-7);
}

TEST(ReferenceAttention, SoftmaxScaledByHeadDim) {
  // head_dim 4 differs from d_model / heads = 2. norm1 turns the two tokens
  // into ~[1, -1] and ~[-1, 1]; q carries ln 3, so after dividing by sqrt(4)
  // the scores are +-ln 3 and the softmax weights 9/10 and 1/10. Dividing by
  // sqrt(2) instead would give different weights.
  ModelSpec spec = tinySpec(2, 1, 4);
  spec.encoder.placement = NormPlacement::Pre;
  WeightStore weights(spec);
  float q = static_cast<float>(std::log(3.0));
  weights.set("embed.tokens", {1, 0, 0, 1, 0, 0, 0, 0});
  weights.set("encoder.layers.0.norm1.weight", {1, 1});
  weights.set("encoder.layers.0.self_attn.q.weight", {q, 0, 0, q, 0, 0, 0, 0});
  // k's and v's extra dims meet only zero q dims / are dropped by o.
  weights.set("encoder.layers.0.self_attn.k.weight", {1, 0, 0, 1, 5, 5, 5, 5});
  weights.set("encoder.layers.0.self_attn.v.weight", {1, 0, 0, 1, 1, 1, 7, 7});
  weights.set("encoder.layers.0.self_attn.o.weight", {1, 0, 0, 0, 0, 1, 0, 0});
  auto out = run(spec, weights, {0, 1});

  // norm1([1, 0]) = [a, -a] with a = 0.5 / sqrt(0.25 + eps).
  double a = 0.5 / std::sqrt(0.25 + 1e-5), qd = static_cast<double>(q);
  double s0 = qd * 2 * a * a / std::sqrt(4.0), s1 = -s0;
  double w0 = std::exp(s0) / (std::exp(s0) + std::exp(s1)), w1 = 1 - w0;
  double c0 = w0 * a - w1 * a; // context row 0 = [c0, -c0]
  expectNear(out, {1 + c0, -c0, -c0, 1 + c0}, 1e-9);
  // In round numbers (a ~ 1): 1 + 9/10 - 1/10.
  EXPECT_NEAR(out[0], 1.8, 1e-4);
}

TEST(ReferenceAttention, GroupedQueryHeadMapping) {
  // 4 query heads over 2 kv heads, head_dim 1: heads 0,1 read kv head 0 and
  // heads 2,3 read kv head 1. Values are constant per kv head (v bias only),
  // so context = [10, 10, 20, 20]; the wrong h % kv_heads gives [10, 20, ..].
  ModelSpec spec = tinySpec(4, 4, 1);
  spec.encoder.kvHeads = 2;
  spec.encoder.placement = NormPlacement::Pre;
  WeightStore weights(spec);
  weights.set("encoder.layers.0.self_attn.v.bias", {10, 20});
  std::vector<float> identity(16, 0.0f);
  for (int i = 0; i < 4; ++i)
    identity[i * 4 + i] = 1.0f;
  weights.set("encoder.layers.0.self_attn.o.weight", identity);
  auto out = run(spec, weights, {0, 3});
  expectNear(out, {10, 10, 20, 20, 10, 10, 20, 20}, 1e-12);
}

TEST(ReferenceAttention, ExplicitHeadDimRoundTrip) {
  // heads 1, head_dim 3 over d_model 2, identical rows: attn(x) = o(v(x)).
  ModelSpec spec = tinySpec(2, 1, 3);
  spec.encoder.placement = NormPlacement::Pre;
  WeightStore weights(spec);
  weights.set("embed.tokens", {0, 0, 0, 0, 0, 0, 0, 0});
  weights.set("encoder.layers.0.norm1.weight", {1, 1});
  weights.set("encoder.layers.0.norm1.bias", {1, 2}); // norm1(0) = [1, 2]
  weights.set("encoder.layers.0.self_attn.v.weight", {1, 0, 0, 1, 1, 1});
  weights.set("encoder.layers.0.self_attn.o.weight", {1, 0, 1, 0, 1, 0});
  weights.set("encoder.layers.0.self_attn.o.bias", {0.5f, 0});
  auto out = run(spec, weights, {2, 2});
  // v = [1, 2, 3]; o = [1 + 3 + 0.5, 2].
  expectNear(out, {4.5, 2, 4.5, 2}, 1e-12);
}

struct ActivationCase {
  Activation act;
  double atOne, atMinusHalf; // act(1), act(-0.5)
};

void PrintTo(const ActivationCase &c, std::ostream *os) { *os << toString(c.act); }

class ReferenceFFN : public ::testing::TestWithParam<ActivationCase> {};

TEST_P(ReferenceFFN, ActivationBetweenIdentityProjections) {
  // Pre placement over a zero embedding: norm2 (weight 0, bias [1, -0.5])
  // hands the ffn exactly [1, -0.5]; up = down = identity. Gated kinds use
  // gate = identity and up = 2 * identity, so they return act(x) * 2x.
  ActivationCase c = GetParam();
  ModelSpec spec = passThroughSpec(2);
  spec.encoder.ffn = c.act;
  bool gated = c.act == Activation::SwiGLU || c.act == Activation::GeGLU;
  WeightStore weights(spec);
  weights.set("encoder.layers.0.norm2.bias", {1, -0.5f});
  weights.set("encoder.layers.0.ffn.down.weight", {1, 0, 0, 1});
  if (gated) {
    weights.set("encoder.layers.0.ffn.gate.weight", {1, 0, 0, 1});
    weights.set("encoder.layers.0.ffn.up.weight", {2, 0, 0, 2});
  } else {
    weights.set("encoder.layers.0.ffn.up.weight", {1, 0, 0, 1});
  }
  auto out = run(spec, weights, {0});
  if (gated)
    expectNear(out, {2 * c.atOne, -1 * c.atMinusHalf}, 1e-9);
  else
    expectNear(out, {c.atOne, c.atMinusHalf}, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, ReferenceFFN,
    ::testing::Values(
        ActivationCase{Activation::Relu, 1.0, 0.0},
        ActivationCase{Activation::Gelu, 0.841344746, -0.154268769},
        ActivationCase{Activation::GeluTanh, 0.841191990, -0.154285990},
        ActivationCase{Activation::Silu, 0.731058579, -0.188770334},
        ActivationCase{Activation::SwiGLU, 0.731058579, -0.188770334},
        ActivationCase{Activation::GeGLU, 0.841344746, -0.154268769}),
    [](const ::testing::TestParamInfo<ActivationCase> &info) {
      return std::string(toString(info.param.act));
    });

TEST(ReferenceStack, LayersReadTheirOwnWeights) {
  // Pre placement with zero sublayers: each block adds its o and down biases.
  // Distinct per-layer biases catch a layer reading another layer's tensors.
  ModelSpec spec = passThroughSpec(2);
  spec.encoder.layers = 3;
  WeightStore weights(spec);
  weights.set("embed.tokens", {1, 2, 0, 0, 0, 0, 0, 0});
  for (int i = 0; i < 3; ++i) {
    std::string layer = "encoder.layers." + std::to_string(i);
    weights.set(layer + ".self_attn.o.bias", {static_cast<float>(10 * (i + 1)), 0});
    weights.set(layer + ".ffn.down.bias", {0, static_cast<float>(100 * (i + 1))});
  }
  auto out = run(spec, weights, {0});
  expectNear(out, {1 + 10 + 20 + 30, 2 + 100 + 200 + 300}, 1e-12);
}

TEST(ReferenceStack, BiasFalseIgnoresStrayBiases) {
  ModelSpec spec = passThroughSpec(2);
  spec.encoder.bias = false;
  WeightStore weights(spec);
  weights.set("embed.tokens", {1, 2, 0, 0, 0, 0, 0, 0});
  // Not in the manifest, so a correct evaluator never reads them.
  weights.setExtra("encoder.layers.0.self_attn.o.bias", {1000, 1000});
  weights.setExtra("encoder.layers.0.ffn.down.bias", {1000, 1000});
  auto out = run(spec, weights, {0});
  expectNear(out, {1, 2}, 1e-12);
}

TEST(ReferenceErrors, MissingPerLayerSpecsAreRefused) {
  // Sema fills layerSpecs; a spec without them would otherwise make the
  // evaluator fall back on (or index past) the stack's base.
  ModelSpec spec = resolveLayers(passThroughSpec(2));
  WeightStore weights(spec);
  spec.encoder.layerSpecs.clear();
  std::string error;
  EXPECT_FALSE(ref::evaluate(spec, weights.lookup(), tokensOnly({0}), &error));
  EXPECT_NE(error.find("per-layer"), std::string::npos) << error;
}

TEST(ReferenceErrors, BadInputsAreRefused) {
  ModelSpec spec = passThroughSpec(2);
  WeightStore weights(spec);
  auto message = [&](const ref::Inputs &inputs) {
    return evaluateError(spec, weights, inputs);
  };
  EXPECT_NE(message(tokensOnly({4})).find("token 4"), std::string::npos);
  EXPECT_NE(message(tokensOnly({-1})).find("token -1"), std::string::npos);
  EXPECT_NE(message(tokensOnly({})).find("no tokens"), std::string::npos);
  EXPECT_NE(message(tokensOnly(std::vector<int32_t>(9, 0))).find("max_seq"),
            std::string::npos);
  ref::Inputs padded = tokensOnly({0, 1});
  padded.length = 3;
  EXPECT_NE(message(padded).find("length 3"), std::string::npos);
  padded.length = 0;
  EXPECT_NE(message(padded).find("length 0"), std::string::npos);
  ref::Inputs source = tokensOnly({0});
  source.sourceTokens = {1};
  EXPECT_NE(message(source).find("encoder-decoder"), std::string::npos);
  ref::Inputs segments = tokensOnly({0});
  segments.segments = {0};
  EXPECT_NE(message(segments).find("no segments"), std::string::npos);
  weights.erase("encoder.layers.0.ffn.up.bias");
  EXPECT_NE(message(tokensOnly({0})).find("encoder.layers.0.ffn.up.bias"),
            std::string::npos);
}

} // namespace
