//===- SemaStackTest.cpp - Stack keys, defaults, masks and overrides ------===//
//
// encoderSpec() puts the stack body on lines 6 and after (d_model = 64).
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

/// The encoder of a spec that must load without errors.
StackSpec encoderOf(llvm::StringRef stack, llvm::StringRef model = "") {
  Loaded loaded = load(encoderSpec(model, stack));
  EXPECT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  return loaded.result.ok() ? loaded.result.spec->encoder : StackSpec();
}

TEST(SemaStackTest, Defaults) {
  StackSpec s = encoderOf("layers = 2\nheads = 4\n");
  EXPECT_TRUE(s.present);
  EXPECT_EQ(s.layers, 2);
  EXPECT_EQ(s.heads, 4);
  EXPECT_EQ(s.kvHeads, 4);  // = heads
  EXPECT_EQ(s.headDim, 16); // d_model / heads
  EXPECT_EQ(s.dFF, 256);    // 4 * d_model
  EXPECT_EQ(s.ffn, Activation::Relu);
  EXPECT_EQ(s.placement, NormPlacement::Post);
  EXPECT_EQ(s.norm.kind, NormKind::LayerNorm);
  EXPECT_DOUBLE_EQ(s.norm.eps, 1e-5);
  EXPECT_FALSE(s.finalNorm.has_value());
  EXPECT_TRUE(s.bias);
  EXPECT_FALSE(s.crossAttention);
  EXPECT_TRUE(s.loc.isValid());
  EXPECT_TRUE(s.attentionLoc.isValid());
  EXPECT_TRUE(s.ffnLoc.isValid());
  EXPECT_TRUE(s.normLoc.isValid());
}

TEST(SemaStackTest, GivenValues) {
  StackSpec s =
      encoderOf("layers = 3\nheads = 8\nkv_heads = 2\nhead_dim = 32\n"
                "d_ff = 100\nffn = swiglu\nbias = false\n"
                "norm = pre(rmsnorm(eps = 1e-6))\n"
                "final_norm = rmsnorm(eps = 1e-6)\n"
                "mask = none\ncross_attention = false\nattention = full\n");
  EXPECT_EQ(s.layers, 3);
  EXPECT_EQ(s.heads, 8);
  EXPECT_EQ(s.kvHeads, 2);
  EXPECT_EQ(s.headDim, 32);
  EXPECT_EQ(s.dFF, 100);
  EXPECT_EQ(s.ffn, Activation::SwiGLU);
  EXPECT_FALSE(s.bias);
  EXPECT_EQ(s.placement, NormPlacement::Pre);
  EXPECT_EQ(s.norm.kind, NormKind::RMSNorm);
  EXPECT_DOUBLE_EQ(s.norm.eps, 1e-6);
  ASSERT_TRUE(s.finalNorm.has_value());
  EXPECT_EQ(s.finalNorm->kind, NormKind::RMSNorm);
  EXPECT_DOUBLE_EQ(s.finalNorm->eps, 1e-6);
}

TEST(SemaStackTest, Activations) {
  struct Case {
    const char *name;
    Activation kind;
  } cases[] = {
      {"relu", Activation::Relu},          {"gelu", Activation::Gelu},
      {"gelu_tanh", Activation::GeluTanh}, {"silu", Activation::Silu},
      {"swiglu", Activation::SwiGLU},      {"geglu", Activation::GeGLU}};
  for (const Case &c : cases) {
    StackSpec s =
        encoderOf(std::string("layers = 1\nheads = 1\nffn = ") + c.name + "\n");
    EXPECT_EQ(s.ffn, c.kind) << c.name;
    EXPECT_STREQ(toString(s.ffn), c.name);
  }
}

TEST(SemaStackTest, NormEpsDefaultsWhenOmitted) {
  StackSpec bare = encoderOf("layers = 1\nheads = 1\nnorm = post(layernorm)\n");
  EXPECT_DOUBLE_EQ(bare.norm.eps, 1e-5);
  StackSpec empty = encoderOf("layers = 1\nheads = 1\nnorm = pre(rmsnorm())\n"
                              "final_norm = layernorm\n");
  EXPECT_EQ(empty.norm.kind, NormKind::RMSNorm);
  EXPECT_DOUBLE_EQ(empty.norm.eps, 1e-5);
  EXPECT_DOUBLE_EQ(empty.finalNorm->eps, 1e-5);
  StackSpec post =
      encoderOf("layers = 1\nheads = 1\nnorm = post(layernorm(eps = 1e-12))\n");
  EXPECT_DOUBLE_EQ(post.norm.eps, 1e-12);
  EXPECT_EQ(post.placement, NormPlacement::Post);
}

TEST(SemaStackTest, HeadsMustDivideDModel) {
  Loaded loaded = load("model m {\n  vocab = 10; d_model = 770; max_seq = 8\n"
                       "  encoder {\n    layers = 1\n    heads = 12\n  }\n}\n");
  EXPECT_EQ(loaded.result.errorCount, 1u);
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("5:13: error: heads (12) must divide d_model (770)\n"
                        "    heads = 12\n"
                        "            ^~\n"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("note: choose heads that divide d_model, or set head_dim"));
}

TEST(SemaStackTest, HeadDimLiftsTheDivisibilityRule) {
  StackSpec s = encoderOf("layers = 1\nheads = 5\nhead_dim = 16\n");
  EXPECT_EQ(s.heads, 5);
  EXPECT_EQ(s.headDim, 16);
}

TEST(SemaStackTest, KVHeadsMustDivideHeads) {
  Loaded loaded =
      load(encoderSpec("", "layers = 1\nheads = 4\nkv_heads = 3\n"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("8:12: error: kv_heads (3) must divide heads (4)"));
  StackSpec ok = encoderOf("layers = 1\nheads = 4\nkv_heads = 1\n");
  EXPECT_EQ(ok.kvHeads, 1);
}

TEST(SemaStackTest, MissingRequiredKeysPointAtTheStack) {
  Loaded loaded = load(encoderSpec("", "d_ff = 8\n"));
  EXPECT_EQ(loaded.result.errorCount, 2u);
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr(
          "5:3: error: missing required key 'layers' in the encoder block"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr(
          "5:3: error: missing required key 'heads' in the encoder block"));
}

TEST(SemaStackTest, WrongTypesAndRanges) {
  Loaded loaded = load(encoderSpec("", "layers = twelve\nheads = 0\nbias = 1\n"
                                       "d_ff = 1.5\nkv_heads = -2\n"));
  EXPECT_EQ(loaded.result.errorCount, 5u) << loaded.diagnostics;
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("6:10: error: expected an integer for 'layers', found a name"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("7:9: error: 'heads' must be > 0, found 0"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr(
          "8:8: error: expected true or false for 'bias', found an integer"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("9:8: error: expected an integer for 'd_ff', found a float"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("10:12: error: 'kv_heads' must be > 0, found -2"));
}

TEST(SemaStackTest, UnknownStackKeyAndModelKeyInStack) {
  Loaded loaded =
      load(encoderSpec("", "layers = 1\nheads = 1\nfnn = relu\nvocab = 3\n"));
  EXPECT_EQ(loaded.result.errorCount, 2u);
  EXPECT_THAT(loaded.diagnostics, HasSubstr("8:1: error: unknown key 'fnn'"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("note: did you mean 'ffn'?"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("9:1: error: 'vocab' is not a key of the encoder block"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr(
          "note: 'vocab' belongs at model level, outside the encoder block"));
}

TEST(SemaStackTest, DuplicateStackKey) {
  Loaded loaded = load(encoderSpec("", "layers = 1\nheads = 1\nlayers = 2\n"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("8:1: error: duplicate key 'layers'"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("6:1: note: first given here"));
}

TEST(SemaStackTest, UnknownActivation) {
  Loaded loaded = load(encoderSpec("", "layers = 1\nheads = 1\nffn = gleu\n"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("8:7: error: unknown value 'gleu' for 'ffn'; expected one of "
                "relu, gelu, gelu_tanh, silu, swiglu, geglu"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("note: did you mean 'gelu'?"));
}

TEST(SemaStackTest, NormNeedsAPlacement) {
  Loaded loaded = load(
      encoderSpec("", "layers = 1\nheads = 1\nnorm = layernorm(eps = 1e-5)\n"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("8:8: error: expected post(...) or pre(...) around "
                        "'layernorm' for 'norm'"));
  Loaded inner =
      load(encoderSpec("", "layers = 1\nheads = 1\nnorm = post(batchnorm)\n"));
  EXPECT_THAT(
      inner.diagnostics,
      HasSubstr(
          "8:13: error: unknown value 'batchnorm' for 'norm'; expected one "
          "of layernorm, rmsnorm"));
  Loaded two = load(encoderSpec(
      "", "layers = 1\nheads = 1\nnorm = post(layernorm, rmsnorm)\n"));
  EXPECT_THAT(two.diagnostics,
              HasSubstr("8:24: error: 'post' takes one argument"));
}

TEST(SemaStackTest, PreNormNeedsFinalNorm) {
  Loaded loaded = load(encoderSpec(
      "", "layers = 1\nheads = 1\nnorm = pre(layernorm(eps = 1e-6))\n"));
  EXPECT_EQ(loaded.result.errorCount, 1u);
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("8:8: error: a pre-norm stack needs final_norm"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr(
          "note: add final_norm = layernorm(eps = 1e-6) to the encoder block"));
  StackSpec none = encoderOf(
      "layers = 1\nheads = 1\nnorm = pre(layernorm)\nfinal_norm = none\n");
  EXPECT_EQ(none.placement, NormPlacement::Pre);
  EXPECT_FALSE(none.finalNorm.has_value());
  StackSpec post = encoderOf("layers = 1\nheads = 1\nfinal_norm = layernorm\n");
  EXPECT_TRUE(post.finalNorm.has_value());
}

TEST(SemaStackTest, CrossAttentionNeedsAnEncoderDecoderModel) {
  StackSpec off = encoderOf("layers = 1\nheads = 1\ncross_attention = false\n");
  EXPECT_FALSE(off.crossAttention);
  Loaded on =
      load(encoderSpec("", "layers = 1\nheads = 1\ncross_attention = true\n"));
  EXPECT_EQ(on.result.errorCount, 1u);
  EXPECT_THAT(on.diagnostics, HasSubstr("8:19: error: cross_attention = true "
                                        "needs an encoder-decoder model"));
}

TEST(SemaStackTest, Attention) {
  StackSpec full = encoderOf("layers = 1\nheads = 1\nattention = full\n");
  EXPECT_EQ(full.attention, AttentionKind::Full);
  StackSpec linformer = encoderOf("layers = 1\nheads = 1\nattention = linformer(k = 16)\n");
  EXPECT_EQ(linformer.attention, AttentionKind::Linformer);
  EXPECT_EQ(linformer.linformerK, 16);
  EXPECT_EQ(linformer.layer(0).linformerK, 16);
  StackSpec all = encoderOf("layers = 1\nheads = 1\nattention = linformer(k = 32)\n");
  EXPECT_EQ(all.linformerK, 32); // k = max_seq is allowed

  // k defaults to 256, which must fit max_seq too.
  Loaded k = load(encoderSpec("", "layers = 1\nheads = 1\nattention = linformer\n"));
  EXPECT_THAT(k.diagnostics,
              HasSubstr("8:13: error: linformer k (256, the default) is larger than max_seq (32)"));
  Loaded bare = load("model m {\n  vocab = 10\n  d_model = 8\n  max_seq = 300\n"
                     "  encoder {\n    layers = 1\n    heads = 1\n    attention = linformer\n"
                     "    layers 0..0 { attention = linformer() }\n  }\n}\n");
  EXPECT_EQ(bare.result.errorCount, 0u) << bare.diagnostics;
  ASSERT_TRUE(bare.result.spec);
  EXPECT_EQ(bare.result.spec->encoder.layer(0).linformerK, 256);
  // A linformer decoder without causal is warned about, without suggesting
  // the causal term linformer refuses.
  Loaded decoder = load("model m {\n  vocab = 10\n  d_model = 8\n  max_seq = 16\n"
                        "  decoder {\n    layers = 1\n    heads = 1\n"
                        "    attention = linformer(k = 4)\n    mask = padding\n  }\n}\n");
  EXPECT_EQ(decoder.result.errorCount, 0u) << decoder.diagnostics;
  EXPECT_THAT(decoder.diagnostics, HasSubstr("linformer projects the whole sequence"));
  EXPECT_THAT(decoder.diagnostics, Not(HasSubstr("add causal")));
  Loaded large =
      load(encoderSpec("", "layers = 1\nheads = 1\nattention = linformer(k = 33)\n"));
  EXPECT_EQ(large.result.errorCount, 1u);
  EXPECT_THAT(large.diagnostics,
              HasSubstr("8:27: error: linformer k (33) is larger than max_seq (32)"));
  Loaded zero =
      load(encoderSpec("", "layers = 1\nheads = 1\nattention = linformer(k = 0)\n"));
  EXPECT_THAT(zero.diagnostics, HasSubstr("8:27: error: 'k' must be > 0, found 0"));
  Loaded sparse = load(encoderSpec("", "layers = 1\nheads = 1\nattention = sparse\n"));
  EXPECT_THAT(sparse.diagnostics,
              HasSubstr("error: unknown value 'sparse' for 'attention'; "
                        "expected one of full, linformer"));
}

TEST(SemaStackTest, RopeNeedsAnEvenHeadDim) {
  Loaded loaded = load(encoderSpec("  position = rope\n",
                                   "layers = 1\nheads = 4\nhead_dim = 7\n"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr(
          "9:12: error: position = rope needs an even head_dim, found 7"));
}

TEST(SemaStackTest, OverrideRanges) {
  Loaded loaded = load(encoderSpec("", "layers = 4\nheads = 1\n"
                                       "layers 2..1 { bias = false }\n"
                                       "layers 0..4 { bias = false }\n"
                                       "layers 0..2 { bias = false }\n"
                                       "layers 2..3 { bias = false }\n"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("8:8: error: layer range 2..1 is empty: its first "
                        "layer comes after its last"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr(
          "9:8: error: layer range 0..4 is outside the encoder's layers 0..3 "
          "(layers = 4)"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("11:8: error: layer range 2..3 overlaps 0..2"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("10:8: note: the other range is here"));
  EXPECT_EQ(loaded.result.errorCount, 3u) << loaded.diagnostics;
  EXPECT_THAT(loaded.diagnostics, Not(HasSubstr("not supported")));
}

TEST(SemaStackTest, OverrideKeys) {
  Loaded loaded = load(
      encoderSpec("", "layers = 4\nheads = 1\n"
                      "layers 0..1 { layers = 2; ffn = gleu; hedas = 2 }\n"));
  EXPECT_EQ(loaded.result.errorCount, 3u) << loaded.diagnostics;
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("8:15: error: 'layers' is not a key of the layers 0..1 block"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("unknown value 'gleu' for 'ffn'"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("8:39: error: unknown key 'hedas'"));
}

} // namespace
