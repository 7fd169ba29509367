//===- SemaLayersTest.cpp - `layers A..B { }` overrides and per-layer specs ===//
//
// encoderSpec() puts the stack body on lines 6 and after (d_model = 64,
// max_seq = 32).
//
//===----------------------------------------------------------------------===//

#include "TestSpecs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace tmc;
using namespace tmc::test;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

StackSpec encoderOf(llvm::StringRef stack, llvm::StringRef model = "") {
  Loaded loaded = load(encoderSpec(model, stack));
  EXPECT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  EXPECT_EQ(loaded.result.warningCount, 0u) << loaded.diagnostics;
  return loaded.result.ok() ? loaded.result.spec->encoder : StackSpec();
}

TEST(SemaLayersTest, EveryLayerHasASpec) {
  StackSpec s = encoderOf("layers = 3\nheads = 4\nd_ff = 100\nffn = gelu\n");
  ASSERT_EQ(s.layerSpecs.size(), 3u);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(s.layer(i).heads, 4);
    EXPECT_EQ(s.layer(i).kvHeads, 4);
    EXPECT_EQ(s.layer(i).headDim, 16);
    EXPECT_EQ(s.layer(i).dFF, 100);
    EXPECT_EQ(s.layer(i).ffn, Activation::Gelu);
  }
}

TEST(SemaLayersTest, OverridesApplyToTheirRangeOnly) {
  StackSpec s = encoderOf("layers = 6\nheads = 4\n"
                          "layers 1..2 { ffn = gelu; d_ff = 32; bias = false }\n"
                          "layers 5..5 { mask = sliding_window(size = 4) }\n");
  ASSERT_EQ(s.layerSpecs.size(), 6u);
  for (int64_t i : {0, 3, 4}) {
    EXPECT_EQ(s.layer(i).ffn, Activation::Relu) << i;
    EXPECT_EQ(s.layer(i).dFF, 256) << i;
    EXPECT_TRUE(s.layer(i).bias) << i;
    EXPECT_TRUE(s.layer(i).mask.none()) << i;
  }
  for (int64_t i : {1, 2}) {
    EXPECT_EQ(s.layer(i).ffn, Activation::Gelu) << i;
    EXPECT_EQ(s.layer(i).dFF, 32) << i;
    EXPECT_FALSE(s.layer(i).bias) << i;
    EXPECT_TRUE(s.layer(i).ffnLoc.isValid());
  }
  ASSERT_EQ(s.layer(5).mask.terms.size(), 1u);
  EXPECT_EQ(s.layer(5).mask.terms[0].kind, MaskKind::SlidingWindow);
  EXPECT_TRUE(s.layer(5).maskLoc.isValid());
  // The stack's own values are its base.
  EXPECT_EQ(s.ffn, Activation::Relu);
  EXPECT_TRUE(s.mask.none());
}

TEST(SemaLayersTest, DefaultsFollowTheLayersOwnKeys) {
  // heads = 8 in layers 0..1: head_dim and kv_heads, left to their defaults
  // in the stack, follow the layer's heads.
  StackSpec s = encoderOf("layers = 3\nheads = 4\nlayers 0..1 { heads = 8 }\n");
  EXPECT_EQ(s.layer(0).heads, 8);
  EXPECT_EQ(s.layer(0).headDim, 8);
  EXPECT_EQ(s.layer(0).kvHeads, 8);
  EXPECT_EQ(s.layer(2).heads, 4);
  EXPECT_EQ(s.layer(2).headDim, 16);
  // Keys the stack sets stay set: kv_heads = 2 and head_dim = 32 hold in
  // the override too.
  StackSpec given = encoderOf(
      "layers = 2\nheads = 4\nkv_heads = 2\nhead_dim = 32\nlayers 1..1 { heads = 8 }\n");
  EXPECT_EQ(given.layer(1).heads, 8);
  EXPECT_EQ(given.layer(1).kvHeads, 2);
  EXPECT_EQ(given.layer(1).headDim, 32);
  StackSpec gqa = encoderOf("layers = 2\nheads = 4\nlayers 1..1 { kv_heads = 1 }\n");
  EXPECT_EQ(gqa.layer(0).kvHeads, 4);
  EXPECT_EQ(gqa.layer(1).kvHeads, 1);
}

TEST(SemaLayersTest, RulesAreCheckedPerLayer) {
  Loaded divide = load(encoderSpec("", "layers = 2\nheads = 4\nlayers 0..0 { heads = 5 }\n"));
  EXPECT_EQ(divide.result.errorCount, 1u) << divide.diagnostics;
  EXPECT_THAT(divide.diagnostics,
              HasSubstr("8:23: error: heads (5) must divide d_model (64)"));

  // kv_heads from the stack, heads from the override: the error is where the
  // layer changed, with a note at the stack's key.
  Loaded kv = load(
      encoderSpec("", "layers = 2\nheads = 4\nkv_heads = 2\nlayers 0..0 { heads = 1 }\n"));
  EXPECT_EQ(kv.result.errorCount, 1u) << kv.diagnostics;
  EXPECT_THAT(kv.diagnostics, HasSubstr("9:23: error: kv_heads (2) must divide heads (1)"));
  EXPECT_THAT(kv.diagnostics, HasSubstr("8:1: note: 'kv_heads' is set for the whole "
                                        "encoder here"));

  Loaded rope = load(encoderSpec("  position = rope\n",
                                 "layers = 2\nheads = 4\nlayers 1..1 { head_dim = 7 }\n"));
  EXPECT_EQ(rope.result.errorCount, 1u) << rope.diagnostics;
  EXPECT_THAT(rope.diagnostics,
              HasSubstr("9:26: error: position = rope needs an even head_dim, found 7"));

  Loaded linformer = load(encoderSpec(
      "", "layers = 2\nheads = 4\nmask = causal\nlayers 1..1 { attention = linformer(k = 4) }\n"));
  EXPECT_EQ(linformer.result.errorCount, 1u) << linformer.diagnostics;
  EXPECT_THAT(linformer.diagnostics,
              HasSubstr("9:27: error: attention = linformer cannot be combined with a "
                        "'causal' mask"));
  EXPECT_THAT(linformer.diagnostics,
              HasSubstr("8:1: note: 'mask' is set for the whole encoder here"));
}

TEST(SemaLayersTest, AStackErrorIsNotRepeatedPerOverride) {
  Loaded loaded = load(encoderSpec("", "layers = 4\nheads = 5\n"
                                       "layers 0..1 { ffn = gelu }\n"
                                       "layers 2..3 { bias = false }\n"));
  EXPECT_EQ(loaded.result.errorCount, 1u) << loaded.diagnostics;
  EXPECT_THAT(loaded.diagnostics, HasSubstr("7:9: error: heads (5) must divide d_model (64)"));
}

TEST(SemaLayersTest, AStackRuleNoLayerTakesWholeIsNotChecked) {
  // Every layer's block sets head_dim or its own heads: no layer takes the
  // stack's heads with the head_dim they would give, so 5 need not divide 64.
  StackSpec covered = encoderOf("layers = 3\nheads = 5\n"
                                "layers 0..1 { head_dim = 8 }\n"
                                "layers 2..2 { heads = 4 }\n");
  EXPECT_EQ(covered.layer(0).heads, 5);
  EXPECT_EQ(covered.layer(0).headDim, 8);
  EXPECT_EQ(covered.layer(2).heads, 4);
  EXPECT_EQ(covered.layer(2).headDim, 16);
  // One layer left to the stack's values: the stack's error stands, once.
  Loaded gap = load(encoderSpec("", "layers = 3\nheads = 5\n"
                                    "layers 0..0 { head_dim = 8 }\n"
                                    "layers 2..2 { head_dim = 8 }\n"));
  EXPECT_EQ(gap.result.errorCount, 1u) << gap.diagnostics;
  EXPECT_THAT(gap.diagnostics, HasSubstr("7:9: error: heads (5) must divide d_model (64)"));
  // Blocks that set other keys do not cover the rule.
  Loaded other = load(encoderSpec("", "layers = 1\nheads = 5\nlayers 0..0 { ffn = gelu }\n"));
  EXPECT_EQ(other.result.errorCount, 1u) << other.diagnostics;
  // The same for kv_heads: every layer sets its own heads, each dividing.
  StackSpec kv = encoderOf("layers = 2\nheads = 4\nkv_heads = 3\n"
                           "layers 0..1 { heads = 6; head_dim = 8 }\n");
  EXPECT_EQ(kv.layer(1).kvHeads, 3);
}

TEST(SemaLayersTest, PreNormLastLayerNeedsFinalNorm) {
  Loaded last = load(encoderSpec(
      "", "layers = 2\nheads = 4\nlayers 1..1 { norm = pre(layernorm) }\n"));
  EXPECT_EQ(last.result.errorCount, 1u) << last.diagnostics;
  EXPECT_THAT(last.diagnostics, HasSubstr("8:22: error: a stack whose last layer is "
                                          "pre-norm needs final_norm"));
  // A post-norm last layer leaves the output normalized.
  StackSpec first = encoderOf("layers = 2\nheads = 4\nlayers 0..0 { norm = pre(layernorm) }\n");
  EXPECT_EQ(first.layer(0).placement, NormPlacement::Pre);
  EXPECT_EQ(first.layer(1).placement, NormPlacement::Post);
  // A pre-norm stack whose last layer is post-norm needs none either.
  StackSpec mixed = encoderOf("layers = 2\nheads = 4\nnorm = pre(rmsnorm)\n"
                              "layers 1..1 { norm = post(layernorm) }\n");
  EXPECT_EQ(mixed.layer(0).norm.kind, NormKind::RMSNorm);
  EXPECT_EQ(mixed.layer(1).norm.kind, NormKind::LayerNorm);
}

TEST(SemaLayersTest, OverrideKeys) {
  Loaded loaded = load(
      encoderSpec("", "layers = 4\nheads = 1\n"
                      "layers 0..1 { layers = 2; ffn = gleu; hedas = 2 }\n"));
  EXPECT_EQ(loaded.result.errorCount, 3u) << loaded.diagnostics;
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("8:15: error: 'layers' is not a key of the layers 0..1 block"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("note: 'layers' belongs directly in the encoder block: a layer "
                        "range cannot change it"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("unknown value 'gleu' for 'ffn'"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("8:39: error: unknown key 'hedas'"));

  Loaded stackOnly = load(encoderSpec(
      "", "layers = 4\nheads = 1\n"
          "layers 0..1 { final_norm = none; cross_attention = false; vocab = 3 }\n"));
  EXPECT_EQ(stackOnly.result.errorCount, 3u) << stackOnly.diagnostics;
  EXPECT_THAT(stackOnly.diagnostics,
              HasSubstr("8:15: error: 'final_norm' is not a key of the layers 0..1 block"));
  EXPECT_THAT(stackOnly.diagnostics,
              HasSubstr("8:34: error: 'cross_attention' is not a key of the layers 0..1 "
                        "block"));
  EXPECT_THAT(stackOnly.diagnostics,
              HasSubstr("8:59: error: 'vocab' is not a key of the layers 0..1 block"));
  EXPECT_THAT(stackOnly.diagnostics,
              HasSubstr("note: 'vocab' belongs at model level, outside the encoder block"));

  Loaded duplicate =
      load(encoderSpec("", "layers = 4\nheads = 1\nlayers 0..1 { bias = false; bias = true }\n"));
  EXPECT_THAT(duplicate.diagnostics, HasSubstr("8:29: error: duplicate key 'bias'"));
  EXPECT_THAT(duplicate.diagnostics, HasSubstr("8:15: note: first given here"));
}

TEST(SemaLayersTest, EmptyOverrideWarns) {
  Loaded loaded = load(encoderSpec("", "layers = 2\nheads = 1\nlayers 0..1 { }\n"));
  ASSERT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  EXPECT_EQ(loaded.result.warningCount, 1u);
  EXPECT_THAT(loaded.diagnostics, HasSubstr("8:1: warning: layers 0..1 { } changes nothing"));
}

TEST(SemaLayersTest, LayerCountIsBounded) {
  StackSpec s = encoderOf("layers = 4096\nheads = 1\n");
  EXPECT_EQ(s.layerSpecs.size(), 4096u);
  Loaded loaded = load(encoderSpec("", "layers = 4097\nheads = 1\n"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("6:10: error: 'layers' must be at most 4096, found 4097"));
}

TEST(SemaLayersTest, AttentionWidthIsBounded) {
  Loaded loaded =
      load(encoderSpec("", "layers = 1\nheads = 65536\nhead_dim = 65536\n"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("8:12: error: heads * head_dim (4294967296) is larger than the "
                        "widest supported layer (2147483647)"));
}

} // namespace
