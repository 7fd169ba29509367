//===- ReferencePositionTest.cpp - Decoders, rope and alibi ---------------===//
//
// A causal decoder checked by what causality implies (a prefix's outputs
// ignore later tokens), rope by its identity at position 0 and a case worked
// by hand that only the rotate-half pairing and frequency produce, alibi by
// the probe model, whose output shows each head's softmax weights.
//
//===----------------------------------------------------------------------===//

#include "tests/reference/ReferenceTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tmc;
using namespace tmc::reftest;

namespace {

MaskSpec causal() {
  MaskSpec m;
  m.terms.push_back(MaskTerm{});
  m.terms.back().kind = MaskKind::Causal;
  return m;
}

/// A small GPT-like decoder: pre layernorm, learned positions, GQA.
ModelSpec decoderSpec() {
  ModelSpec spec;
  spec.name = "dec";
  spec.vocab = 8;
  spec.dModel = 8;
  spec.maxSeq = 8;
  spec.position = PositionKind::Learned;
  StackSpec &dec = spec.decoder;
  dec.present = true;
  dec.layers = 2;
  dec.heads = 2;
  dec.kvHeads = 1;
  dec.headDim = 4;
  dec.dFF = 6;
  dec.ffn = Activation::GeluTanh;
  dec.placement = NormPlacement::Pre;
  dec.finalNorm = NormSpec{};
  dec.mask = causal();
  return spec;
}

/// max |a[i] - b[i]| over rows [first, last) of width `width`.
double rowDiff(const std::vector<double> &a, const std::vector<double> &b, int64_t width,
               int64_t first, int64_t last) {
  double diff = 0;
  for (int64_t i = first * width; i < last * width; ++i)
    diff = std::max(diff, std::abs(a[i] - b[i]));
  return diff;
}

TEST(ReferenceDecoder, CausalPrefixIgnoresLaterTokens) {
  ModelSpec spec = decoderSpec();
  WeightStore weights(spec);
  weights.randomize(11);
  int64_t d = spec.dModel;
  auto a = run(spec, weights, {1, 2, 3, 4, 5});
  auto b = run(spec, weights, {1, 2, 3, 6, 0});
  EXPECT_LT(rowDiff(a, b, d, 0, 3), 1e-12);
  EXPECT_GT(rowDiff(a, b, d, 3, 4), 1e-3);
  // Shows the check has teeth: without the mask the prefix does change.
  spec.decoder.mask = MaskSpec{};
  auto c = run(spec, weights, {1, 2, 3, 4, 5});
  auto e = run(spec, weights, {1, 2, 3, 6, 0});
  EXPECT_GT(rowDiff(c, e, d, 0, 3), 1e-3);
}

TEST(ReferenceDecoder, PaddingPastThePromptChangesNothingUnderCausal) {
  // Under causal, hiding keys at or past the length cannot touch rows before it.
  ModelSpec spec = decoderSpec();
  WeightStore weights(spec);
  weights.randomize(5);
  auto plain = run(spec, weights, {3, 1, 4, 1});
  spec.decoder.mask.terms.push_back(MaskTerm{});
  spec.decoder.mask.terms.back().kind = MaskKind::Padding;
  ref::Inputs padded = tokensOnly({3, 1, 4, 1});
  padded.length = 2;
  auto masked = run(spec, weights, padded);
  EXPECT_LT(rowDiff(plain, masked, spec.dModel, 0, 2), 1e-12);
  EXPECT_GT(rowDiff(plain, masked, spec.dModel, 2, 4), 1e-3);
}

TEST(ReferenceRope, PositionZeroIsIdentity) {
  ModelSpec none = decoderSpec();
  none.position = PositionKind::None;
  ModelSpec rope = none;
  rope.position = PositionKind::Rope;
  WeightStore weights(none);
  weights.randomize(3);
  expectNear(run(rope, weights, {5}), run(none, weights, {5}), 1e-12);
  // Further along, rope turns q and k and so changes the output.
  EXPECT_GT(rowDiff(run(rope, weights, {5, 2}), run(none, weights, {5, 2}), 8, 1, 2), 1e-3);
}

TEST(ReferenceRope, RotateHalfPairsDimensionIWithIPlusHalf) {
  // Probe over 8 dims, one head of 8: every token's q is c e1 and its k is
  // c e5. Rotate-half pairs dim 1 with dim 5 and turns it by p * theta^(-2/8)
  // = 0.1 p, so q_i = c (cos 0.1i, sin 0.1i) and k_j = c (-sin 0.1j,
  // cos 0.1j) on dims (1, 5), and q_i . k_j = c^2 sin(0.1 (i - j)).
  // Interleaved pairs (0,1), (4,5) would leave q . k = 0 (uniform weights).
  ModelSpec spec = probeSpec(false, 8);
  spec.position = PositionKind::Rope;
  spec.ropeTheta = 10000.0;
  WeightStore weights = probeWeights(spec);
  float c = 3.0f;
  std::vector<float> q(64, 0.0f), k(64, 0.0f);
  for (int t = 0; t < 8; ++t) {
    q[1 * 8 + t] = c / 2; // norm1 hands q the input 2 e_t
    k[5 * 8 + t] = c / 2;
  }
  weights.set("encoder.layers.0.self_attn.q.weight", q);
  weights.set("encoder.layers.0.self_attn.k.weight", k);
  auto out = run(spec, weights, iota(3));

  double s = c * c / std::sqrt(8.0);
  std::vector<double> expected;
  for (int i = 0; i < 3; ++i) {
    double total = 0;
    for (int j = 0; j < 3; ++j)
      total += std::exp(s * std::sin(0.1 * (i - j)));
    for (int j = 0; j < 8; ++j) {
      double w = j < 3 ? std::exp(s * std::sin(0.1 * (i - j))) / total : 0.0;
      expected.push_back((i == j ? 1.0 : 0.0) + 2.0 * w);
    }
  }
  expectNear(out, expected, 1e-6);
}

TEST(ReferenceAlibi, SlopesArePowersOfTwo) {
  for (int h = 0; h < 8; ++h)
    EXPECT_DOUBLE_EQ(ref::alibiSlope(h, 8), std::ldexp(1.0, -(h + 1)));
  EXPECT_DOUBLE_EQ(ref::alibiSlope(0, 4), 0.25);
  EXPECT_DOUBLE_EQ(ref::alibiSlope(3, 4), 1.0 / 256);
}

/// The probe with 4 heads of width 1: head h's output dim h shows weight(i, h).
/// Expected: out[i][h] = [i == h] + 2 softmax_j(-slope_h * distance(i, j))[h].
std::vector<double> alibiExpected(int64_t count, bool oneSided, bool causalMask) {
  const double slopes[] = {0.25, 0.0625, 0.015625, 0.00390625}; // 2^(-8(h+1)/4)
  std::vector<double> expected;
  for (int64_t i = 0; i < count; ++i)
    for (int64_t h = 0; h < 4; ++h) {
      auto score = [&](int64_t j) {
        double distance = oneSided ? static_cast<double>(i - j) : std::abs(double(i - j));
        return -slopes[h] * distance;
      };
      double total = 0;
      for (int64_t j = 0; j < count; ++j)
        if (!causalMask || j <= i)
          total += std::exp(score(j));
      bool seen = h < count && (!causalMask || h <= i);
      expected.push_back((i == h ? 1.0 : 0.0) + (seen ? 2.0 * std::exp(score(h)) / total : 0));
    }
  return expected;
}

TEST(ReferenceAlibi, EncoderBiasIsSymmetricInDistance) {
  ModelSpec spec = probeSpec(false, 4, 4);
  spec.position = PositionKind::Alibi;
  WeightStore weights = probeWeights(spec);
  expectNear(run(spec, weights, iota(4)), alibiExpected(4, false, false), 1e-9);
}

TEST(ReferenceAlibi, DecoderBiasIsOneSided) {
  ModelSpec spec = probeSpec(true, 4, 4);
  spec.position = PositionKind::Alibi;
  WeightStore weights = probeWeights(spec);
  // Without a mask, the decoder's -slope * (i - j) favours later keys.
  expectNear(run(spec, weights, iota(4)), alibiExpected(4, true, false), 1e-9);
  spec.decoder.mask = causal();
  expectNear(run(spec, weights, iota(4)), alibiExpected(4, true, true), 1e-9);
}

TEST(ReferenceAlibi, IdenticalKeysStillSumToOne) {
  // One token repeated: every value row is the same, so whatever the bias,
  // normalized weights return it unchanged: out = x + v = 3 e_2.
  ModelSpec spec = probeSpec(false, 4, 4);
  spec.position = PositionKind::Alibi;
  WeightStore weights = probeWeights(spec);
  auto out = run(spec, weights, {2, 2, 2});
  expectNear(out, {0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 3, 0}, 1e-12);
}

TEST(ReferenceGroupedQuery, DecoderHeadsShareKeysAndValues) {
  // 2 query heads over 1 kv head must equal 2 query heads over 2 kv heads
  // whose two k/v projections are copies of the one.
  ModelSpec gqa = decoderSpec();
  ModelSpec full = gqa;
  full.decoder.kvHeads = 2;
  WeightStore shared(gqa), copied(full);
  shared.randomize(21);
  copied.randomize(21);
  for (const TensorSpec &tensor : ref::requiredTensors(resolveLayers(gqa))) {
    const std::vector<float> &values = shared.get(tensor.name);
    bool kv = tensor.name.find(".self_attn.k.") != std::string::npos ||
              tensor.name.find(".self_attn.v.") != std::string::npos;
    if (!kv) {
      copied.set(tensor.name, values);
      continue;
    }
    std::vector<float> twice = values;
    twice.insert(twice.end(), values.begin(), values.end());
    copied.set(tensor.name, twice);
  }
  expectNear(run(gqa, shared, {1, 2, 3}), run(full, copied, {1, 2, 3}), 1e-12);
}

} // namespace
