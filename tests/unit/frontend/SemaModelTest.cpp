//===- SemaModelTest.cpp - Model-level keys, stacks, and their errors -----===//

#include "TestSpecs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace tmc;
using namespace tmc::test;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

TEST(SemaModelTest, Defaults) {
  Loaded loaded = load(encoderSpec());
  ASSERT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  const ModelSpec &spec = *loaded.result.spec;
  EXPECT_EQ(spec.name, "m");
  EXPECT_EQ(spec.vocab, 100);
  EXPECT_EQ(spec.dModel, 64);
  EXPECT_EQ(spec.maxSeq, 32);
  EXPECT_EQ(spec.position, PositionKind::Sinusoidal);
  EXPECT_FALSE(spec.embedScale);
  EXPECT_FALSE(spec.embedNorm.has_value());
  EXPECT_EQ(spec.segments, 0);
  EXPECT_TRUE(spec.shareEmbeddings);
  EXPECT_EQ(spec.output, OutputKind::Hidden);
  EXPECT_EQ(spec.dtype, DType::F32);
  EXPECT_TRUE(spec.encoder.present);
  EXPECT_FALSE(spec.decoder.present);
  EXPECT_EQ(loaded.result.errorCount, 0u);
  EXPECT_EQ(loaded.result.warningCount, 0u);
  EXPECT_TRUE(loaded.diagnostics.empty());
}

TEST(SemaModelTest, ModelKeys) {
  Loaded loaded = load(encoderSpec("  position = learned\n"
                                   "  embed_scale = true\n"
                                   "  embed_norm = layernorm(eps = 1e-12)\n"
                                   "  segments = 2\n"
                                   "  output = hidden\n"
                                   "  dtype = f32\n"));
  ASSERT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  const ModelSpec &spec = *loaded.result.spec;
  EXPECT_EQ(spec.position, PositionKind::Learned);
  EXPECT_TRUE(spec.embedScale);
  ASSERT_TRUE(spec.embedNorm.has_value());
  EXPECT_EQ(spec.embedNorm->kind, NormKind::LayerNorm);
  EXPECT_DOUBLE_EQ(spec.embedNorm->eps, 1e-12);
  EXPECT_EQ(spec.segments, 2);
}

TEST(SemaModelTest, Positions) {
  struct Case {
    const char *text;
    PositionKind kind;
    double theta;
  } cases[] = {{"none", PositionKind::None, 10000},
               {"alibi", PositionKind::Alibi, 10000},
               {"rope", PositionKind::Rope, 10000},
               {"rope(theta = 500000)", PositionKind::Rope, 500000},
               {"rope(theta = 1e4)", PositionKind::Rope, 1e4}};
  for (const Case &c : cases) {
    Loaded loaded =
        load(encoderSpec(std::string("  position = ") + c.text + "\n"));
    ASSERT_TRUE(loaded.result.ok()) << c.text << "\n" << loaded.diagnostics;
    EXPECT_EQ(loaded.result.spec->position, c.kind) << c.text;
    EXPECT_DOUBLE_EQ(loaded.result.spec->ropeTheta, c.theta) << c.text;
  }
}

TEST(SemaModelTest, EmbedNormKinds) {
  Loaded rms = load(encoderSpec("  embed_norm = rmsnorm\n"));
  ASSERT_TRUE(rms.result.ok()) << rms.diagnostics;
  EXPECT_EQ(rms.result.spec->embedNorm->kind, NormKind::RMSNorm);
  EXPECT_DOUBLE_EQ(rms.result.spec->embedNorm->eps, 1e-5); // the default
  Loaded none = load(encoderSpec("  embed_norm = none\n"));
  ASSERT_TRUE(none.result.ok());
  EXPECT_FALSE(none.result.spec->embedNorm.has_value());
}

TEST(SemaModelTest, UnknownKeySuggestsTheClosest) {
  Loaded loaded = load(encoderSpec("  d_modle = 64\n"));
  EXPECT_FALSE(loaded.result.ok());
  EXPECT_EQ(loaded.result.errorCount, 1u);
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("test.tm:5:3: error: unknown key 'd_modle'\n"
                        "  d_modle = 64\n"
                        "  ^~~~~~~\n"
                        "  d_model\n"
                        "note: did you mean 'd_model'?\n"));
}

TEST(SemaModelTest, UnknownKeyWithoutCloseMatchListsKeys) {
  Loaded loaded = load(encoderSpec("  colour = 3\n"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("5:3: error: unknown key 'colour'"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("note: the model block takes vocab, d_model"));
  EXPECT_THAT(loaded.diagnostics, Not(HasSubstr("did you mean")));
}

TEST(SemaModelTest, StackKeyAtModelLevel) {
  Loaded loaded = load(encoderSpec("  heads = 4\n"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("5:3: error: 'heads' is not a key of the model block"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("note: 'heads' belongs inside encoder { } or decoder { }"));
}

TEST(SemaModelTest, DuplicateKeyNotesTheFirst) {
  Loaded loaded = load(encoderSpec("  vocab = 200\n"));
  EXPECT_EQ(loaded.result.errorCount, 1u);
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("5:3: error: duplicate key 'vocab'"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("2:3: note: first given here"));
}

TEST(SemaModelTest, WrongValueType) {
  Loaded loaded =
      load("model m {\n  vocab = big\n  d_model = 6.5\n  max_seq = [1]\n"
           "  embed_scale = 1\n  encoder { layers = 1; heads = 1 }\n}\n");
  EXPECT_EQ(loaded.result.errorCount, 4u) << loaded.diagnostics;
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("2:11: error: expected an integer for 'vocab', found a name"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr(
          "3:13: error: expected an integer for 'd_model', found a float"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr(
          "4:13: error: expected an integer for 'max_seq', found a list"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("5:17: error: expected true or false for "
                        "'embed_scale', found an integer"));
}

TEST(SemaModelTest, OutOfRange) {
  Loaded loaded =
      load("model m {\n  vocab = 0\n  d_model = -8\n  max_seq = 4294967296\n"
           "  segments = -1\n  encoder { layers = 1; heads = 1 }\n}\n");
  EXPECT_EQ(loaded.result.errorCount, 4u) << loaded.diagnostics;
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("2:11: error: 'vocab' must be > 0, found 0"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("3:13: error: 'd_model' must be > 0, found -8"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("4:13: error: 'max_seq' must be at most 2147483647, "
                        "found 4294967296"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("5:14: error: 'segments' must be >= 0, found -1"));
}

TEST(SemaModelTest, MissingRequiredKeysPointAtTheModel) {
  Loaded loaded = load("model m {\n  encoder { layers = 1; heads = 1 }\n}\n");
  EXPECT_EQ(loaded.result.errorCount, 3u);
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("1:1: error: missing required key 'vocab' in model 'm'"));
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("note: add vocab = ... to the model block"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("missing required key 'd_model'"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("missing required key 'max_seq'"));
}

TEST(SemaModelTest, UnknownEnumValueListsTheAllowed) {
  Loaded loaded = load(encoderSpec("  position = learnt\n"));
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("5:14: error: unknown value 'learnt' for 'position'; expected "
                "one of sinusoidal, learned, none, rope, alibi"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("note: did you mean 'learned'?"));
  Loaded number = load(encoderSpec("  position = 3\n"));
  EXPECT_THAT(
      number.diagnostics,
      HasSubstr("error: expected one of sinusoidal, learned, none, rope, alibi "
                "for 'position', found an integer"));
}

TEST(SemaModelTest, CallArguments) {
  Loaded unknown =
      load(encoderSpec("  embed_norm = layernorm(epsilon = 1e-5)\n"));
  EXPECT_THAT(
      unknown.diagnostics,
      HasSubstr("5:26: error: unknown argument 'epsilon' for 'layernorm'; "
                "expected eps"));
  EXPECT_THAT(unknown.diagnostics, HasSubstr("note: did you mean 'eps'?"));

  Loaded duplicate =
      load(encoderSpec("  embed_norm = layernorm(eps = 1e-5, eps = 1e-6)\n"));
  EXPECT_THAT(duplicate.diagnostics,
              HasSubstr("5:38: error: duplicate argument 'eps'"));
  EXPECT_THAT(duplicate.diagnostics, HasSubstr("5:26: note: first given here"));

  Loaded positional = load(encoderSpec("  embed_norm = layernorm(1e-5)\n"));
  EXPECT_THAT(
      positional.diagnostics,
      HasSubstr("error: 'layernorm' takes named arguments (eps = ...), found a "
                "value without a name"));

  Loaded none = load(encoderSpec("  position = learned(size = 3)\n"));
  EXPECT_THAT(none.diagnostics, HasSubstr("error: unknown argument 'size' for "
                                          "'learned'; it takes no arguments"));

  Loaded eps = load(encoderSpec("  embed_norm = rmsnorm(eps = 0)\n"));
  EXPECT_THAT(eps.diagnostics,
              HasSubstr("5:30: error: 'eps' must be > 0, found 0"));
  Loaded theta = load(encoderSpec("  position = rope(theta = big)\n"));
  EXPECT_THAT(theta.diagnostics,
              HasSubstr("error: expected a number for 'theta', found a name"));
}

TEST(SemaModelTest, Outputs) {
  Loaded hidden = load(encoderSpec("  output = hidden\n"));
  ASSERT_TRUE(hidden.result.ok()) << hidden.diagnostics;
  EXPECT_EQ(hidden.result.spec->output, OutputKind::Hidden);
  EXPECT_EQ(hidden.result.spec->outputWidth(), 64);

  Loaded lm = load(encoderSpec("  output = lm_head\n"));
  ASSERT_TRUE(lm.result.ok()) << lm.diagnostics;
  EXPECT_EQ(lm.result.spec->output, OutputKind::LMHead);
  EXPECT_TRUE(lm.result.spec->tiedHead); // the defaults
  EXPECT_FALSE(lm.result.spec->headBias);
  EXPECT_EQ(lm.result.spec->outputWidth(), 100);
  EXPECT_TRUE(lm.result.spec->outputLoc.isValid());

  Loaded untied = load(encoderSpec("  output = lm_head(tied = false, bias = true)\n"));
  ASSERT_TRUE(untied.result.ok()) << untied.diagnostics;
  EXPECT_FALSE(untied.result.spec->tiedHead);
  EXPECT_TRUE(untied.result.spec->headBias);

  Loaded classifier = load(encoderSpec("  output = classifier(classes = 3, pool = mean)\n"));
  ASSERT_TRUE(classifier.result.ok()) << classifier.diagnostics;
  EXPECT_EQ(classifier.result.spec->output, OutputKind::Classifier);
  EXPECT_EQ(classifier.result.spec->classes, 3);
  EXPECT_EQ(classifier.result.spec->pool, Pooling::Mean);
  EXPECT_EQ(classifier.result.spec->outputWidth(), 3);
  Loaded first = load(encoderSpec("  output = classifier(classes = 2)\n"));
  ASSERT_TRUE(first.result.ok()) << first.diagnostics;
  EXPECT_EQ(first.result.spec->pool, Pooling::First);
}

TEST(SemaModelTest, OutputErrors) {
  Loaded pool = load(encoderSpec("  output = classifier(classes = 2, pool = last)\n"));
  EXPECT_EQ(pool.result.errorCount, 1u) << pool.diagnostics;
  EXPECT_THAT(pool.diagnostics,
              HasSubstr("5:43: error: unknown value 'last' for 'pool'; expected one "
                        "of first, mean"));
  Loaded classes = load(encoderSpec("  output = classifier()\n"));
  EXPECT_THAT(classes.diagnostics,
              HasSubstr("error: 'classifier' needs the argument 'classes'"));
  Loaded zero = load(encoderSpec("  output = classifier(classes = 0)\n"));
  EXPECT_THAT(zero.diagnostics, HasSubstr("5:33: error: 'classes' must be > 0, found 0"));
  Loaded tied = load(encoderSpec("  output = lm_head(tied = 1)\n"));
  EXPECT_THAT(tied.diagnostics,
              HasSubstr("5:27: error: expected true or false for 'tied', found an integer"));
  Loaded wrongArg = load(encoderSpec("  output = lm_head(classes = 2)\n"));
  EXPECT_THAT(wrongArg.diagnostics,
              HasSubstr("error: unknown argument 'classes' for 'lm_head'; expected tied, bias"));
  // Nothing in the contract is "not supported" at the language level.
  EXPECT_THAT(tied.diagnostics, Not(HasSubstr("not supported")));
}

TEST(SemaModelTest, DTypes) {
  struct Case {
    const char *text;
    DType type;
  } cases[] = {{"f32", DType::F32}, {"f16", DType::F16}, {"bf16", DType::BF16}};
  for (const Case &c : cases) {
    Loaded loaded = load(encoderSpec(std::string("  dtype = ") + c.text + "\n"));
    ASSERT_TRUE(loaded.result.ok()) << c.text << loaded.diagnostics;
    EXPECT_EQ(loaded.result.spec->dtype, c.type) << c.text;
  }
  Loaded f64 = load(encoderSpec("  dtype = f64\n"));
  EXPECT_THAT(f64.diagnostics, HasSubstr("5:11: error: unknown value 'f64' for 'dtype'; "
                                         "expected one of f32, f16, bf16"));
}

TEST(SemaModelTest, NoStack) {
  Loaded loaded = load("model m {\n  vocab = 1; d_model = 4; max_seq = 4\n}\n");
  EXPECT_EQ(loaded.result.errorCount, 1u);
  EXPECT_THAT(
      loaded.diagnostics,
      HasSubstr("1:1: error: model 'm' has no encoder or decoder block"));
}

TEST(SemaModelTest, DuplicateStack) {
  Loaded loaded = load("model m {\n  vocab = 1; d_model = 4; max_seq = 4\n"
                       "  encoder { layers = 1; heads = 1 }\n"
                       "  encoder { layers = 1; heads = 1 }\n}\n");
  EXPECT_EQ(loaded.result.errorCount, 1u);
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("4:3: error: duplicate 'encoder' block"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("3:3: note: first given here"));
}

TEST(SemaModelTest, DecoderOnlyModel) {
  Loaded loaded = load("model m {\n  vocab = 10; d_model = 8; max_seq = 4\n"
                       "  decoder {\n    layers = 1; heads = 2\n  }\n}\n");
  ASSERT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  EXPECT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics;
  const ModelSpec &spec = *loaded.result.spec;
  EXPECT_FALSE(spec.encoder.present);
  EXPECT_TRUE(spec.decoder.present);
  EXPECT_FALSE(spec.isEncoderDecoder());
  EXPECT_FALSE(spec.decoder.crossAttention);
  // A decoder's default mask is causal; an encoder's is none.
  ASSERT_EQ(spec.decoder.mask.terms.size(), 1u);
  EXPECT_EQ(spec.decoder.mask.terms[0].kind, MaskKind::Causal);
  EXPECT_TRUE(spec.decoder.layer(0).mask.has(MaskKind::Causal));
}

TEST(SemaModelTest, EncoderDecoderModel) {
  Loaded loaded = load("model m {\n  vocab = 10; d_model = 8; max_seq = 4\n"
                       "  encoder { layers = 2; heads = 2; mask = padding }\n"
                       "  decoder { layers = 1; heads = 4 }\n}\n");
  ASSERT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  const ModelSpec &spec = *loaded.result.spec;
  EXPECT_TRUE(spec.isEncoderDecoder());
  EXPECT_FALSE(spec.encoder.crossAttention);
  EXPECT_TRUE(spec.decoder.crossAttention); // the default next to an encoder
  EXPECT_TRUE(spec.encoder.mask.has(MaskKind::Padding));
  EXPECT_TRUE(spec.decoder.mask.has(MaskKind::Causal));
  EXPECT_EQ(spec.decoder.headDim, 2);
}

TEST(SemaModelTest, DecoderIsCheckedLikeAnEncoder) {
  Loaded loaded = load("model m {\n  vocab = 1; d_model = 4; max_seq = 4\n"
                       "  decoder {\n    layers = 1; heads = 3; mask = causal\n"
                       "    hedas = 2\n  }\n}\n");
  EXPECT_EQ(loaded.result.errorCount, 2u) << loaded.diagnostics;
  EXPECT_THAT(loaded.diagnostics, HasSubstr("4:25: error: heads (3) must divide d_model (4)"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("5:5: error: unknown key 'hedas'"));
  EXPECT_THAT(loaded.diagnostics, Not(HasSubstr("not supported")));
}

TEST(SemaModelTest, CrossAttentionWhereItDoesNotApply) {
  Loaded decoderOnly = load("model m {\n  vocab = 1; d_model = 4; max_seq = 4\n"
                            "  decoder { layers = 1; heads = 1; cross_attention = true }\n}\n");
  EXPECT_EQ(decoderOnly.result.errorCount, 1u) << decoderOnly.diagnostics;
  EXPECT_THAT(decoderOnly.diagnostics,
              HasSubstr("3:54: error: cross_attention = true needs an encoder-decoder model"));
  Loaded inEncoder = load("model m {\n  vocab = 1; d_model = 4; max_seq = 4\n"
                          "  encoder { layers = 1; heads = 1; cross_attention = true }\n"
                          "  decoder { layers = 1; heads = 1 }\n}\n");
  EXPECT_EQ(inEncoder.result.errorCount, 1u) << inEncoder.diagnostics;
  EXPECT_THAT(inEncoder.diagnostics,
              HasSubstr("3:54: error: cross_attention = true is only valid in the decoder "
                        "block"));
  Loaded off = load("model m {\n  vocab = 1; d_model = 4; max_seq = 4\n"
                    "  encoder { layers = 1; heads = 1 }\n"
                    "  decoder { layers = 1; heads = 1; cross_attention = false }\n}\n");
  ASSERT_TRUE(off.result.ok()) << off.diagnostics;
  EXPECT_FALSE(off.result.spec->decoder.crossAttention);
  EXPECT_EQ(off.result.warningCount, 1u);
  EXPECT_THAT(off.diagnostics,
              HasSubstr("4:54: warning: with cross_attention = false, the decoder never "
                        "reads the encoder's output"));
}

TEST(SemaModelTest, SegmentsNeedAnEncoder) {
  Loaded decoderOnly = load("model m {\n  vocab = 1; d_model = 4; max_seq = 4\n"
                            "  segments = 2\n"
                            "  decoder { layers = 1; heads = 1 }\n}\n");
  EXPECT_EQ(decoderOnly.result.errorCount, 1u) << decoderOnly.diagnostics;
  EXPECT_THAT(decoderOnly.diagnostics,
              HasSubstr("3:14: error: segments needs an encoder: a decoder-only model has "
                        "no token types"));
  Loaded zero = load("model m {\n  vocab = 1; d_model = 4; max_seq = 4\n"
                     "  segments = 0\n"
                     "  decoder { layers = 1; heads = 1 }\n}\n");
  EXPECT_TRUE(zero.result.ok()) << zero.diagnostics;
  Loaded encoderDecoder = load("model m {\n  vocab = 1; d_model = 4; max_seq = 4\n"
                               "  segments = 2\n"
                               "  encoder { layers = 1; heads = 1 }\n"
                               "  decoder { layers = 1; heads = 1 }\n}\n");
  ASSERT_TRUE(encoderDecoder.result.ok()) << encoderDecoder.diagnostics;
  EXPECT_EQ(encoderDecoder.result.spec->segments, 2);
}

TEST(SemaModelTest, FirstTokenPoolingOfACausalDecoderWarns) {
  Loaded loaded = load("model m {\n  vocab = 1; d_model = 4; max_seq = 4\n"
                       "  output = classifier(classes = 2, pool = first)\n"
                       "  decoder { layers = 1; heads = 1 }\n}\n");
  ASSERT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  EXPECT_EQ(loaded.result.warningCount, 1u);
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("3:3: warning: pool = first reads position 0, which a causal "
                        "decoder lets see only itself"));
  Loaded mean = load("model m {\n  vocab = 1; d_model = 4; max_seq = 4\n"
                     "  output = classifier(classes = 2, pool = mean)\n"
                     "  decoder { layers = 1; heads = 1 }\n}\n");
  EXPECT_EQ(mean.result.warningCount, 0u) << mean.diagnostics;
}

TEST(SemaModelTest, ShareEmbeddings) {
  Loaded loaded = load("model m {\n  vocab = 1; d_model = 4; max_seq = 4\n"
                       "  share_embeddings = false\n"
                       "  encoder { layers = 1; heads = 1 }\n"
                       "  decoder { layers = 1; heads = 1 }\n}\n");
  ASSERT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  EXPECT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics;
  EXPECT_FALSE(loaded.result.spec->shareEmbeddings);
}

TEST(SemaModelTest, ModelTooLargeForSixtyFourBits) {
  // Each dimension is valid; the parameter count is not representable.
  Loaded loaded = load("model m {\n  vocab = 2147483647; d_model = 2147483647\n"
                       "  max_seq = 4\n"
                       "  encoder { layers = 4096; heads = 1 }\n}\n");
  EXPECT_EQ(loaded.result.errorCount, 1u) << loaded.diagnostics;
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("1:1: error: model 'm' is too large: the parameter count does not "
                        "fit in 64 bits"));
  // About 2^62 parameters fit; their 2^64 bytes do not.
  Loaded bytes = load("model m {\n  vocab = 2147483647; d_model = 2147483647\n"
                      "  max_seq = 4\n"
                      "  encoder { layers = 1; heads = 1; head_dim = 1; d_ff = 1 }\n}\n");
  EXPECT_THAT(bytes.diagnostics,
              HasSubstr("error: model 'm' is too large: the weight size in bytes does not "
                        "fit in 64 bits"));
  Loaded kv = load("model m {\n  vocab = 2; d_model = 1048576\n"
                   "  max_seq = 2147483647\n"
                   "  decoder { layers = 4096; heads = 1; d_ff = 1 }\n}\n");
  EXPECT_THAT(kv.diagnostics,
              HasSubstr("error: model 'm' is too large: the KV-cache size does not fit"));
}

TEST(SemaModelTest, ShareEmbeddingsWarnsWithoutADecoder) {
  Loaded loaded = load(encoderSpec("  share_embeddings = false\n"));
  ASSERT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  EXPECT_EQ(loaded.result.warningCount, 1u);
  EXPECT_FALSE(loaded.result.spec->shareEmbeddings);
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("5:3: warning: share_embeddings has no effect"));
}

TEST(SemaModelTest, EveryErrorInOneRun) {
  Loaded loaded = load("model m {\n"
                       "  vocab = 0\n"
                       "  d_modle = 64\n"
                       "  position = learnt\n"
                       "  encoder {\n"
                       "    layers = 2\n"
                       "    heads = 4\n"
                       "    ffn = gleu\n"
                       "    bias = yes\n"
                       "  }\n"
                       "}\n");
  // vocab range, unknown d_modle (which stands for the missing d_model),
  // missing max_seq, position, ffn, bias.
  EXPECT_EQ(loaded.result.errorCount, 6u) << loaded.diagnostics;
  EXPECT_THAT(loaded.diagnostics,
              Not(HasSubstr("missing required key 'd_model'")));
  EXPECT_TRUE(loaded.result.ast);
  EXPECT_FALSE(loaded.result.ok());
  // Printed in the order of the file, whatever order Sema found them in.
  const char *order[] = {"1:1: error: missing required key 'max_seq'",
                         "2:11: error:",
                         "3:3: error:",
                         "4:14: error:",
                         "8:11: error:",
                         "9:12: error:"};
  size_t last = 0;
  for (const char *text : order) {
    size_t at = loaded.diagnostics.find(text);
    ASSERT_NE(at, std::string::npos) << text;
    EXPECT_GE(at, last) << text;
    last = at;
  }
}

} // namespace
