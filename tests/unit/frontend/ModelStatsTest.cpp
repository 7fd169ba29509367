//===- ModelStatsTest.cpp - Parameters, bytes, KV cache and FLOPs ---------===//
//
// The small models' expected values are worked out by hand from the formulas
// in docs/spec-language.md ("What tmc check reports"); the named models are
// checked against their published parameter counts.
//
//===----------------------------------------------------------------------===//

#include "TestSpecs.h"

#include "frontend/ModelStats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace tmc;
using namespace tmc::test;

namespace {

ModelSpec specOf(const std::string &source) {
  Loaded loaded = load(source);
  EXPECT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  return loaded.result.ok() ? *loaded.result.spec : ModelSpec();
}

ModelSpec exampleSpec(const char *name) {
  Loaded loaded;
  llvm::raw_string_ostream os(loaded.diagnostics);
  loaded.result = loadSpec(std::string(TMC_SOURCE_DIR "/examples/") + name, os);
  EXPECT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  return loaded.result.ok() ? *loaded.result.spec : ModelSpec();
}

ModelSizes sizesOf(const ModelSpec &spec) {
  std::optional<ModelSizes> sizes = computeSizes(spec);
  EXPECT_TRUE(sizes.has_value());
  return sizes.value_or(ModelSizes());
}

TEST(ModelStatsTest, GPT2SmallMatchesThePublishedCount) {
  ModelSpec spec = exampleSpec("gpt2-small.tm");
  ModelSizes sizes = sizesOf(spec);
  EXPECT_EQ(sizes.parameters, 124439808);
  EXPECT_EQ(sizes.weightBytes, 4 * 124439808);
  // 12 layers x (K and V) x 1024 positions x 768 x 4 bytes.
  EXPECT_EQ(sizes.kvCacheBytes, 12 * 2 * 1024 * 768 * 4);
  EXPECT_EQ(sizes.embeddingParameters, 50257 * 768 + 1024 * 768);
  EXPECT_EQ(sizes.headParameters, 0); // tied
  EXPECT_EQ(sizes.embeddingParameters + sizes.decoderParameters, sizes.parameters);

  FlopCounts flops = countFlops(spec);
  // Per layer 2 * (4 d^2 + 2 d d_ff) = 14,155,776; causal attention averages
  // (1024 + 1) / 2 keys, 4 * 768 FLOPs each; the head 2 * 768 * 50257.
  double layers = 12 * 14155776.0;
  EXPECT_DOUBLE_EQ(flops.prefill, layers + 12 * 4 * 768 * 512.5 + 2 * 768 * 50257.0);
  ASSERT_TRUE(flops.decode.has_value());
  EXPECT_DOUBLE_EQ(*flops.decode, layers + 12 * 4 * 768 * 1024.0 + 2 * 768 * 50257.0);
  EXPECT_TRUE(flops.exact);
}

TEST(ModelStatsTest, BertBaseClassifierMatchesThePublishedCount) {
  for (const char *example : {"bert-base.tm", "longformer-local-global.tm"}) {
    ModelSizes sizes = sizesOf(exampleSpec(example));
    EXPECT_EQ(sizes.parameters, 108893186) << example;
    EXPECT_EQ(sizes.headParameters, 2 * 768 + 2) << example;
    EXPECT_EQ(sizes.kvCacheBytes, 0) << example;
  }
}

TEST(ModelStatsTest, TinyDecoderByHand) {
  // d = 8, 2 heads of 4, d_ff = 16, vocab 10, max_seq 4, tied LM head.
  ModelSpec spec = specOf("model m {\n vocab = 10; d_model = 8; max_seq = 4\n"
                          " output = lm_head\n decoder { layers = 1; heads = 2; d_ff = 16 }\n}\n");
  // Projections 2 * (64 + 2 * 64 + 64) = 512, FFN 2 * 2 * 8 * 16 = 512.
  // Causal keys over 4 rows: 1 + 2 + 3 + 4 = 10, at 4 * 8 FLOPs each, / 4.
  // Head: 2 * 8 * 10 = 160.
  FlopCounts flops = countFlops(spec);
  EXPECT_DOUBLE_EQ(flops.prefill, 512 + 512 + 4 * 8 * 10 / 4.0 + 160);
  EXPECT_DOUBLE_EQ(*flops.decode, 512 + 512 + 4 * 8 * 4 + 160);
  EXPECT_DOUBLE_EQ(flops.headPrefill, 160);
  ModelSizes sizes = sizesOf(spec);
  EXPECT_EQ(sizes.kvCacheBytes, 2 * 4 * 8 * 4);
  // tokens 80; per layer 4 * (64 + 8) + 2 * 16 + (16 * 8 + 16) + (8 * 16 + 8) = 600.
  EXPECT_EQ(sizes.parameters, 80 + 600);
}

TEST(ModelStatsTest, TinyEncoderDecoderByHand) {
  ModelSpec spec = specOf("model m {\n vocab = 10; d_model = 8; max_seq = 4\n"
                          " output = lm_head\n"
                          " encoder { layers = 1; heads = 2; d_ff = 16 }\n"
                          " decoder { layers = 1; heads = 2; d_ff = 16 }\n}\n");
  FlopCounts flops = countFlops(spec);
  // Encoder: (512 + 512) per token + 4 * 8 * 16 keys over the sequence / 4.
  EXPECT_DOUBLE_EQ(flops.encoderPrefill, 1024 + 4 * 8 * 16 / 4.0);
  // Decoder: + cross q/o 256 per token; cross k/v 4 * 8 * 8 per source token;
  // every target row reads the 4 source keys.
  EXPECT_DOUBLE_EQ(flops.decoderPrefill, 1024 + 256 + 4 * 8 * 10 / 4.0 + 4 * 8 * 8 + 4 * 8 * 4);
  EXPECT_DOUBLE_EQ(flops.prefill, flops.encoderPrefill + flops.decoderPrefill + 160);
  // Decoding reuses the cached encoder keys and values.
  EXPECT_DOUBLE_EQ(*flops.decode, 1024 + 256 + 4 * 8 * 4 + 4 * 8 * 4 + 160);
  // Self and cross keys and values of the one decoder layer.
  EXPECT_EQ(sizesOf(spec).kvCacheBytes, 2 * (2 * 4 * 8 * 4));
}

TEST(ModelStatsTest, EncoderOnlyHasNoDecodeStep) {
  ModelSpec spec = specOf(encoderSpec());
  FlopCounts flops = countFlops(spec);
  EXPECT_FALSE(flops.decode.has_value());
  EXPECT_GT(flops.prefill, 0);
  EXPECT_EQ(sizesOf(spec).kvCacheBytes, 0);
}

TEST(ModelStatsTest, MasksReduceAttentionWork) {
  // max_seq 8, sliding_window(size = 2): rows see 2, 3, ..., 3, 2 keys = 22.
  std::string stack = "layers = 1\nheads = 1\nd_ff = 4\nmask = sliding_window(size = 2)\n";
  ModelSpec spec = specOf("model m {\n vocab = 10; d_model = 8; max_seq = 8\n"
                          " encoder {\n" + stack + " }\n}\n");
  double projections = 2 * 4 * 64.0, ffn = 2 * 2 * 8 * 4.0;
  EXPECT_DOUBLE_EQ(countFlops(spec).prefill, projections + ffn + 4 * 8 * 22 / 8.0);
}

TEST(ModelStatsTest, LinformerAttendsToKRows) {
  ModelSpec spec = specOf(encoderSpec("", "layers = 1\nheads = 4\nd_ff = 8\n"
                                          "attention = linformer(k = 2)\n"));
  // d = 64, max_seq = 32: projections 2 * 4 * 64^2, FFN 2 * 2 * 64 * 8, the
  // sequence projections of K and V 4 * k * 64, then 2 keys per query.
  double expected = 2 * 4 * 64.0 * 64 + 2 * 2 * 64 * 8 + 4 * 2 * 64 + 4 * 64 * 2;
  EXPECT_DOUBLE_EQ(countFlops(spec).prefill, expected);
  ModelSizes sizes = sizesOf(spec);
  ModelSizes full = sizesOf(specOf(encoderSpec("", "layers = 1\nheads = 4\nd_ff = 8\n")));
  EXPECT_EQ(sizes.parameters - full.parameters, 2 * 2 * 32);
}

TEST(ModelStatsTest, GroupedQueryAttentionShrinksTheCache) {
  ModelSpec spec = exampleSpec("llama-style.tm");
  // 8 layers x K and V x 2048 positions x (2 kv heads x 64) x 4 bytes.
  EXPECT_EQ(sizesOf(spec).kvCacheBytes, 8 * 2 * 2048 * 128 * 4);
  // Untied head: its own [vocab, d_model] table.
  EXPECT_EQ(sizesOf(spec).headParameters, 32000 * 512);
}

TEST(ModelStatsTest, HalfPrecisionHalvesTheWeightBytes) {
  ModelSpec f16 = specOf(encoderSpec("  dtype = f16\n"));
  ModelSizes sizes = sizesOf(f16);
  EXPECT_EQ(sizes.weightBytes, 2 * sizes.parameters);
  EXPECT_EQ(bytesPerElement(DType::BF16), 2);
  EXPECT_EQ(bytesPerElement(DType::F32), 4);
}

TEST(ModelStatsTest, ClassifierRunsOncePerSequence) {
  ModelSpec spec = specOf(encoderSpec("  output = classifier(classes = 4)\n"));
  // 2 * d_model * classes, spread over max_seq = 32 positions.
  EXPECT_DOUBLE_EQ(countFlops(spec).headPrefill, 2 * 64 * 4 / 32.0);
}

TEST(ModelStatsTest, PartsAddUp) {
  for (const char *example : {"transformer-base.tm", "llama-style.tm", "bigbird-random.tm"}) {
    ModelSizes sizes = sizesOf(exampleSpec(example));
    EXPECT_EQ(sizes.embeddingParameters + sizes.encoderParameters + sizes.decoderParameters +
                  sizes.headParameters,
              sizes.parameters)
        << example;
  }
}

TEST(ModelStatsTest, OverflowIsReportedNotWrapped) {
  ModelSpec spec = specOf(encoderSpec());
  spec.vocab = int64_t(1) << 40;
  spec.dModel = int64_t(1) << 40; // beyond Sema's limits, as a later stage might build
  std::string what;
  EXPECT_FALSE(computeSizes(spec, &what).has_value());
  EXPECT_EQ(what, "the parameter count");
}

} // namespace
