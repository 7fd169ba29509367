//===- ReferenceEncoderDecoderTest.cpp - Cross-attention and embeddings ---===//
//
// Encoder-decoder models built so each answer is a line of arithmetic: stacks
// whose sublayers are zero pass their embeddings through, and a
// cross-attention with q = k = 0 and v = o = identity adds the plain mean of
// the (valid) encoder outputs.
//
//===----------------------------------------------------------------------===//

#include "tests/reference/ReferenceTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tmc;
using namespace tmc::reftest;

namespace {

void setupStack(StackSpec &stack, int64_t width) {
  stack.present = true;
  stack.layers = 1;
  stack.heads = 1;
  stack.kvHeads = 1;
  stack.headDim = width;
  stack.dFF = 1;
  stack.bias = false;
  stack.placement = NormPlacement::Pre;
  stack.norm = NormSpec{NormKind::RMSNorm, 0.0, {}};
}

/// vocab = d_model = 4, both stacks zero unless a test sets weights, the
/// decoder cross-attending with no self-attention mask.
ModelSpec encoderDecoderSpec() {
  ModelSpec spec;
  spec.name = "encdec";
  spec.vocab = 4;
  spec.dModel = 4;
  spec.maxSeq = 6;
  spec.position = PositionKind::None;
  setupStack(spec.encoder, 4);
  setupStack(spec.decoder, 4);
  spec.decoder.crossAttention = true;
  return spec;
}

/// Cross-attention that adds the mean of the encoder outputs it may see;
/// norm2 (its input norm) needs a weight so rmsnorm of h is defined.
void setMeanCrossAttention(WeightStore &weights) {
  weights.set("decoder.layers.0.norm2.weight", {1, 1, 1, 1});
  weights.set("decoder.layers.0.cross_attn.v.weight", identity(4));
  weights.set("decoder.layers.0.cross_attn.o.weight", identity(4));
}

ref::Inputs encDecInputs(std::vector<int32_t> source, std::vector<int32_t> target) {
  ref::Inputs inputs;
  inputs.sourceTokens = std::move(source);
  inputs.tokens = std::move(target);
  return inputs;
}

TEST(ReferenceEncoderDecoder, CrossAttentionReadsTheFinalNormedEncoderOutput) {
  ModelSpec spec = encoderDecoderSpec();
  spec.encoder.finalNorm = NormSpec{NormKind::RMSNorm, 0.0, {}};
  WeightStore weights(spec);
  weights.set("embed.tokens", identity(4));
  // rmsnorm(e_t) = 2 e_t over 4 dims; the weight tells the dims apart.
  weights.set("encoder.final_norm.weight", {1, 2, 3, 4});
  setMeanCrossAttention(weights);
  ref::Inputs inputs = encDecInputs({0, 1, 3}, {2, 2});
  // Encoder outputs 2 [1,0,0,0], 2 [0,2,0,0], 2 [0,0,0,4]; mean (2/3) [1,2,0,4].
  double third = 2.0 / 3.0;
  std::vector<double> row = {third, 2 * third, 1, 4 * third};
  expectNear(run(spec, weights, inputs), {row[0], row[1], row[2], row[3], //
                                          row[0], row[1], row[2], row[3]},
             1e-12);
  // Source padding hides source position 2 from cross-attention.
  inputs.sourceLength = 2;
  expectNear(run(spec, weights, inputs), {1, 2, 1, 0, 1, 2, 1, 0}, 1e-12);
}

TEST(ReferenceEncoderDecoder, NormsAreNumberedSelfCrossFeedForward) {
  // Post placement with zero sublayers: out = norm3(norm2(norm1(x))). Over
  // two dims with eps 0, layernorm maps [u, v] to w * [s, -s] + b with s the
  // sign of u - v, so each norm's weight and bias are visible in the result.
  ModelSpec spec = encoderDecoderSpec();
  spec.decoder.placement = NormPlacement::Post;
  spec.decoder.norm = NormSpec{NormKind::LayerNorm, 0.0, {}};
  spec.vocab = spec.dModel = 2;
  spec.encoder.headDim = spec.decoder.headDim = 2;
  WeightStore weights(spec);
  weights.set("embed.tokens", {1, 0, 0, 1});
  weights.set("decoder.layers.0.norm1.weight", {1, 1});
  weights.set("decoder.layers.0.norm2.weight", {1, 1});
  weights.set("decoder.layers.0.norm2.bias", {-3, 0});
  weights.set("decoder.layers.0.norm3.weight", {2, 2});
  weights.set("decoder.layers.0.norm3.bias", {0, 1});
  // [1, 0] -> norm1 [1, -1] -> norm2 [-2, -1] -> norm3 [-2, 3]. Swapping
  // norm2 and norm3, or using norm3 twice, ends in [-2, -1] or [2, -1].
  expectNear(run(spec, weights, encDecInputs({1}, {0})), {-2, 3}, 1e-12);
}

TEST(ReferenceEncoderDecoder, PositionsDoNotReachCrossAttention) {
  // Only the cross-attention has weights; rope and alibi act on
  // self-attention alone, so the output must not depend on the scheme.
  ModelSpec spec = encoderDecoderSpec();
  WeightStore weights(spec);
  weights.set("embed.tokens", identity(4));
  WeightStore random(spec);
  random.randomize(4);
  for (const char *name : {"q", "k", "v", "o"}) {
    std::string tensor = std::string("decoder.layers.0.cross_attn.") + name + ".weight";
    weights.set(tensor, random.get(tensor));
  }
  weights.set("decoder.layers.0.norm2.weight", {1, 1, 1, 1});
  ref::Inputs inputs = encDecInputs({0, 1, 2, 3}, {3, 2, 1});
  auto plain = run(spec, weights, inputs);
  for (PositionKind kind : {PositionKind::Rope, PositionKind::Alibi}) {
    spec.position = kind;
    expectNear(run(spec, weights, inputs), plain, 1e-12);
  }
}

TEST(ReferenceEncoderDecoder, LearnedPositionsRestartInTheDecoder) {
  // Source of 3 tokens, target of 2: target rows read positions 0 and 1.
  ModelSpec spec = encoderDecoderSpec();
  spec.position = PositionKind::Learned;
  WeightStore weights(spec);
  weights.set("embed.tokens", identity(4));
  std::vector<float> positions(24, 0.0f);
  for (int p = 0; p < 6; ++p)
    positions[p * 4 + 3] = static_cast<float>(10 * (p + 1)); // dim 3 = 10 (p + 1)
  weights.set("embed.positions", positions);
  auto out = run(spec, weights, encDecInputs({1, 1, 1}, {0, 2}));
  expectNear(out, {1, 0, 0, 10, 0, 0, 1, 20}, 1e-12);
}

TEST(ReferenceEncoderDecoder, SinusoidalPositionsRestartInTheDecoder) {
  ModelSpec spec = encoderDecoderSpec();
  spec.position = PositionKind::Sinusoidal;
  WeightStore weights(spec);
  auto out = run(spec, weights, encDecInputs({1, 1, 1}, {0, 0}));
  // Zero token table: the rows are PE(0) = [0, 1, 0, 1] and PE(1).
  expectNear(out, {0, 1, 0, 1, 0.841470985, 0.540302306, 0.009999833, 0.999950000},
             1e-8);
}

TEST(ReferenceEncoderDecoder, UnsharedEmbeddingsGiveTheDecoderItsTable) {
  ModelSpec spec = encoderDecoderSpec();
  spec.shareEmbeddings = false;
  spec.output = OutputKind::LMHead; // tied: to the decoder's table
  WeightStore weights(spec);
  weights.set("embed.tokens", identity(4));
  std::vector<float> table = {1, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4, 5, 0, 0, 0};
  weights.set("decoder.embed.tokens", table);
  setMeanCrossAttention(weights); // adds the mean of the encoder's e_t rows
  auto logits = run(spec, weights, encDecInputs({0, 0}, {1, 3}));
  // h = decoder row + e_0 (mean of encoder outputs over source [0, 0]).
  std::vector<std::vector<double>> h = {{1, 0, 3, 0}, {6, 0, 0, 0}};
  std::vector<double> expected;
  for (const auto &row : h)
    for (int v = 0; v < 4; ++v) {
      double dot = 0;
      for (int j = 0; j < 4; ++j)
        dot += row[j] * table[v * 4 + j];
      expected.push_back(dot);
    }
  expectNear(logits, expected, 1e-12);
}

TEST(ReferenceSegments, IdsPickRowsOfTheSegmentTable) {
  ModelSpec spec = passThroughSpec(2);
  spec.segments = 3;
  WeightStore weights(spec);
  weights.set("embed.segments", {0, 0, 10, 0, 0, 100});
  ref::Inputs inputs = tokensOnly({0, 0, 0});
  inputs.segments = {2, 0, 1};
  expectNear(run(spec, weights, inputs), {0, 100, 0, 0, 10, 0}, 1e-12);
  // Without ids every token is in segment 0.
  expectNear(run(spec, weights, {0, 0}), {0, 0, 0, 0}, 1e-12);
}

TEST(ReferenceSegments, LabelTheSourceOfAnEncoderDecoder) {
  ModelSpec spec = encoderDecoderSpec();
  spec.segments = 2;
  WeightStore weights(spec);
  weights.set("embed.tokens", identity(4));
  weights.set("embed.segments", {0, 0, 0, 0.5f, 0, 0, 7, 0});
  setMeanCrossAttention(weights);
  ref::Inputs inputs = encDecInputs({0, 1}, {3});
  inputs.segments = {1, 1};
  // Encoder outputs e_0 + s_1 and e_1 + s_1: mean [0.5, 0.5, 7, 0]; the
  // target token is in segment 0: e_3 + s_0.
  expectNear(run(spec, weights, inputs), {0.5, 0.5, 7, 1.5}, 1e-12);
}

TEST(ReferenceEncoderDecoder, InputsAreChecked) {
  ModelSpec spec = encoderDecoderSpec();
  WeightStore weights(spec);
  EXPECT_NE(evaluateError(spec, weights, tokensOnly({1})).find("no source tokens"),
            std::string::npos);
  ref::Inputs inputs = encDecInputs({0, 9}, {1});
  EXPECT_NE(evaluateError(spec, weights, inputs).find("source token 9"), std::string::npos);
  inputs = encDecInputs({0, 1}, {1});
  inputs.sourceLength = 3;
  EXPECT_NE(evaluateError(spec, weights, inputs).find("source length 3"),
            std::string::npos);
}

} // namespace
