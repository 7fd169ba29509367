//===- FrontendTest.cpp - loadSpec, the examples, diagnostics, manifest ---===//

#include "TestSpecs.h"

#include "frontend/Diagnostics.h"
#include "frontend/Manifest.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>

using namespace tmc;
using namespace tmc::test;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

Loaded loadFile(const std::string &path) {
  Loaded loaded;
  llvm::raw_string_ostream os(loaded.diagnostics);
  loaded.result = loadSpec(path, os);
  return loaded;
}

TEST(FrontendTest, EncoderTinyExampleLoads) {
  Loaded loaded = loadFile(TMC_SOURCE_DIR "/examples/encoder-tiny.tm");
  ASSERT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  EXPECT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics;
  const ModelSpec &spec = *loaded.result.spec;
  EXPECT_EQ(spec.vocab, 100);
  EXPECT_EQ(spec.dModel, 64);
  EXPECT_EQ(spec.maxSeq, 64);
  EXPECT_EQ(spec.position, PositionKind::Learned);
  EXPECT_EQ(spec.output, OutputKind::Hidden);
  EXPECT_EQ(spec.encoder.layers, 2);
  EXPECT_EQ(spec.encoder.heads, 4);
  EXPECT_EQ(spec.encoder.dFF, 128);
  EXPECT_EQ(spec.encoder.ffn, Activation::Relu);
  EXPECT_EQ(spec.encoder.placement, NormPlacement::Post);
  EXPECT_EQ(spec.encoder.norm.kind, NormKind::LayerNorm);
  EXPECT_DOUBLE_EQ(spec.encoder.norm.eps, 1e-5);
}

TEST(FrontendTest, BertMiniExampleLoads) {
  Loaded loaded = loadFile(TMC_SOURCE_DIR "/examples/bert-mini-encoder.tm");
  ASSERT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  EXPECT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics;
  const ModelSpec &spec = *loaded.result.spec;
  EXPECT_EQ(spec.position, PositionKind::Sinusoidal);
  EXPECT_TRUE(spec.embedScale);
  EXPECT_EQ(spec.vocab, 1000);
  EXPECT_EQ(spec.dModel, 128);
  EXPECT_EQ(spec.encoder.layers, 4);
  EXPECT_EQ(spec.encoder.heads, 4);
  EXPECT_EQ(spec.encoder.headDim, 32);
  EXPECT_EQ(spec.encoder.dFF, 512);
}

/// The examples of docs/spec-language.md must parse and check cleanly.
TEST(FrontendTest, ContractExamplesParse) {
  const char *examples[] = {
      "model gpt2_small {\n  vocab = 50257\n  d_model = 768\n  max_seq = 1024\n"
      "  position = learned\n  output = lm_head(tied = true)\n  decoder {\n"
      "    layers = 12\n    heads = 12\n    d_ff = 3072\n    ffn = gelu_tanh\n"
      "    norm = pre(layernorm(eps = 1e-5))\n    final_norm = layernorm(eps = "
      "1e-5)\n"
      "    mask = causal\n  }\n}\n",
      "model transformer_base {\n  vocab = 37000\n  d_model = 512\n  max_seq = "
      "256\n"
      "  position = sinusoidal\n  embed_scale = true\n  output = lm_head(tied "
      "= true)\n"
      "  encoder { layers = 6; heads = 8; d_ff = 2048; ffn = relu; mask = "
      "padding }\n"
      "  decoder { layers = 6; heads = 8; d_ff = 2048; ffn = relu; mask = "
      "causal }\n}\n",
      "model bert_local {\n  vocab = 30522\n  d_model = 768\n  max_seq = 512\n"
      "  position = learned\n  segments = 2\n  embed_norm = layernorm(eps = "
      "1e-12)\n"
      "  output = classifier(classes = 2, pool = first)\n  encoder {\n    "
      "layers = 12\n"
      "    heads = 12\n    d_ff = 3072\n    ffn = gelu\n    norm = "
      "post(layernorm(eps = 1e-12))\n"
      "    mask = padding\n    layers 0..5 { mask = padding + "
      "sliding_window(size = 128) "
      "+ global(tokens = [0]) }\n  }\n}\n",
      "model llama_tiny {\n  vocab = 32000\n  d_model = 512\n  max_seq = 2048\n"
      "  position = rope(theta = 10000)\n  output = lm_head(tied = false)\n  "
      "decoder {\n"
      "    layers = 8\n    heads = 8\n    kv_heads = 2\n    d_ff = 1376\n    "
      "ffn = swiglu\n"
      "    bias = false\n    norm = pre(rmsnorm(eps = 1e-6))\n"
      "    final_norm = rmsnorm(eps = 1e-6)\n  }\n}\n"};
  for (const char *example : examples) {
    Loaded loaded = load(example);
    EXPECT_TRUE(loaded.result.ok()) << loaded.diagnostics;
    EXPECT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics;
  }
}

/// Every shipped example checks without a diagnostic and opens with a comment
/// saying what model it is.
TEST(FrontendTest, EveryExampleLoads) {
  const char *examples[] = {"bert-base.tm",     "bert-mini-encoder.tm",
                            "bigbird-random.tm", "encoder-tiny.tm",
                            "gpt2-small.tm",    "llama-style.tm",
                            "longformer-local-global.tm", "transformer-base.tm"};
  for (const char *example : examples) {
    Loaded loaded = loadFile(std::string(TMC_SOURCE_DIR "/examples/") + example);
    EXPECT_TRUE(loaded.result.ok()) << example << "\n" << loaded.diagnostics;
    EXPECT_TRUE(loaded.diagnostics.empty()) << example << "\n" << loaded.diagnostics;
    auto buffer = llvm::MemoryBuffer::getFile(std::string(TMC_SOURCE_DIR "/examples/") + example);
    ASSERT_TRUE(bool(buffer)) << example;
    EXPECT_TRUE((*buffer)->getBuffer().starts_with("# ")) << example;
  }
}

TEST(FrontendTest, ExamplesMeanWhatTheySay) {
  Loaded gpt2 = loadFile(TMC_SOURCE_DIR "/examples/gpt2-small.tm");
  ASSERT_TRUE(gpt2.result.ok());
  EXPECT_TRUE(gpt2.result.spec->decoder.present);
  EXPECT_FALSE(gpt2.result.spec->encoder.present);
  EXPECT_EQ(gpt2.result.spec->output, OutputKind::LMHead);

  Loaded t = loadFile(TMC_SOURCE_DIR "/examples/transformer-base.tm");
  ASSERT_TRUE(t.result.ok());
  EXPECT_TRUE(t.result.spec->isEncoderDecoder());
  EXPECT_TRUE(t.result.spec->decoder.crossAttention);

  Loaded local = loadFile(TMC_SOURCE_DIR "/examples/longformer-local-global.tm");
  ASSERT_TRUE(local.result.ok());
  const StackSpec &encoder = local.result.spec->encoder;
  EXPECT_TRUE(encoder.layer(0).mask.has(MaskKind::SlidingWindow));
  EXPECT_TRUE(encoder.layer(5).mask.has(MaskKind::Global));
  EXPECT_FALSE(encoder.layer(6).mask.has(MaskKind::SlidingWindow));
  EXPECT_TRUE(encoder.layer(11).mask.has(MaskKind::Padding));

  Loaded llama = loadFile(TMC_SOURCE_DIR "/examples/llama-style.tm");
  ASSERT_TRUE(llama.result.ok());
  EXPECT_EQ(llama.result.spec->decoder.kvHeads, 2);
  EXPECT_FALSE(llama.result.spec->tiedHead);
  EXPECT_EQ(llama.result.spec->position, PositionKind::Rope);

  Loaded bigbird = loadFile(TMC_SOURCE_DIR "/examples/bigbird-random.tm");
  ASSERT_TRUE(bigbird.result.ok());
  EXPECT_TRUE(bigbird.result.spec->encoder.mask.has(MaskKind::Random));
}

/// Every diagnostic about a spec names file:line:col: the lit tests' specs
/// (which hold every kind of mistake) and the user's typo-ridden spec of
/// SemaMaskTest are reported without a single unlocated error or warning.
TEST(FrontendTest, EveryDiagnosticIsLocated) {
  std::error_code ec;
  unsigned specs = 0;
  for (llvm::sys::fs::directory_iterator it(TMC_SOURCE_DIR "/tests/lit/frontend", ec), end;
       it != end && !ec; it.increment(ec)) {
    if (!llvm::StringRef(it->path()).ends_with(".tm"))
      continue;
    Loaded loaded = loadFile(it->path());
    EXPECT_EQ(loaded.result.unlocatedCount, 0u) << it->path() << "\n" << loaded.diagnostics;
    ++specs;
  }
  EXPECT_GT(specs, 10u);
  Loaded typos = load("model m {\n  vocab = 10\n  dmodel = 8\n  max_seq = 8\n"
                      "  decoder { layers = 1; heads = 2\n"
                      "    mask = causal + sliding(size = 2) }\n}\n");
  EXPECT_EQ(typos.result.unlocatedCount, 0u) << typos.diagnostics;
  EXPECT_EQ(typos.result.warningCount, 0u) << typos.diagnostics;
}

TEST(FrontendTest, MissingFile) {
  Loaded loaded = loadFile("/nonexistent/spec.tm");
  EXPECT_FALSE(loaded.result.ok());
  EXPECT_FALSE(loaded.result.ast);
  EXPECT_EQ(loaded.result.errorCount, 1u);
  EXPECT_THAT(
      loaded.diagnostics,
      StartsWith("/nonexistent/spec.tm: error: cannot read the spec: "));
}

TEST(FrontendTest, ManifestOfASmallEncoder) {
  Loaded loaded =
      load(encoderSpec("  position = learned\n",
                       "layers = 1\nheads = 2\nd_ff = 16\nbias = false\n"));
  ASSERT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  std::vector<std::pair<std::string, std::vector<int64_t>>> actual;
  for (const TensorSpec &tensor : buildManifest(*loaded.result.spec)) {
    EXPECT_EQ(tensor.dtype, DType::F32);
    actual.emplace_back(tensor.name, tensor.shape);
  }
  std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
      {"embed.tokens", {100, 64}},
      {"embed.positions", {32, 64}},
      {"encoder.layers.0.self_attn.q.weight", {64, 64}},
      {"encoder.layers.0.self_attn.k.weight", {64, 64}},
      {"encoder.layers.0.self_attn.v.weight", {64, 64}},
      {"encoder.layers.0.self_attn.o.weight", {64, 64}},
      {"encoder.layers.0.norm1.weight", {64}},
      {"encoder.layers.0.norm1.bias", {64}},
      {"encoder.layers.0.ffn.up.weight", {16, 64}},
      {"encoder.layers.0.ffn.down.weight", {64, 16}},
      {"encoder.layers.0.norm2.weight", {64}},
      {"encoder.layers.0.norm2.bias", {64}},
  };
  EXPECT_EQ(actual, expected);
}

TEST(FrontendTest, ManifestWithBiasesAndSinusoidalPositions) {
  Loaded loaded = load(encoderSpec("", "layers = 2\nheads = 4\n"));
  ASSERT_TRUE(loaded.result.ok());
  std::vector<TensorSpec> manifest = buildManifest(*loaded.result.spec);
  // Per layer: 4 x (weight + bias), 2 norms x 2, ffn 2 x 2 = 16; no position
  // table.
  ASSERT_EQ(manifest.size(), 1u + 2 * 16);
  EXPECT_EQ(manifest[0].name, "embed.tokens");
  EXPECT_EQ(manifest[2].name, "encoder.layers.0.self_attn.q.bias");
  EXPECT_EQ(manifest[2].shape, std::vector<int64_t>{64});
  EXPECT_EQ(manifest.back().name, "encoder.layers.1.norm2.bias");
}

TEST(FrontendTest, DiagnosticFormat) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy("key = value\n", "d.tm"),
      llvm::SMLoc());
  std::string text;
  llvm::raw_string_ostream os(text);
  DiagnosticEngine diags(sourceMgr, os);
  llvm::StringRef buffer = sourceMgr.getMemoryBuffer(1)->getBuffer();
  llvm::SMLoc value = llvm::SMLoc::getFromPointer(buffer.data() + 6);
  diags.errorWithFix(value, "bad value", "valve", "did you mean 'valve'?");
  diags.warning(llvm::SMLoc::getFromPointer(buffer.data()), "a warning");
  diags.note(value, "a note");
  diags.flush();
  EXPECT_EQ(diags.errorCount(), 1u);
  EXPECT_EQ(diags.warningCount(), 1u);
  // Printed in source order; the note stays with the warning before it.
  EXPECT_EQ(text, "d.tm:1:1: warning: a warning\n"
                  "key = value\n"
                  "^~~\n"
                  "d.tm:1:7: note: a note\n"
                  "key = value\n"
                  "      ^~~~~\n"
                  "d.tm:1:7: error: bad value\n"
                  "key = value\n"
                  "      ^~~~~\n"
                  "      valve\n"
                  "note: did you mean 'valve'?\n");
}

TEST(FrontendTest, ClosestMatch) {
  llvm::StringRef keys[] = {"vocab", "d_model", "max_seq", "heads", "ffn"};
  EXPECT_EQ(closestMatch("d_modle", keys), "d_model");
  EXPECT_EQ(closestMatch("D_MODEL", keys), "d_model");
  EXPECT_EQ(closestMatch("hedas", keys), "heads");
  EXPECT_EQ(closestMatch("fnn", keys), "ffn");
  EXPECT_EQ(closestMatch("colour", keys), "");
  EXPECT_EQ(closestMatch("vocab", keys), ""); // an exact match is no typo
  llvm::StringRef masks[] = {"none", "causal", "padding", "sliding_window", "dilated_window"};
  EXPECT_EQ(closestMatch("sliding", masks), "sliding_window"); // not 'padding'
  EXPECT_EQ(closestMatch("dilated", masks), "dilated_window");
  EXPECT_EQ(closestMatch("casual", masks), "causal");
}

TEST(FrontendTest, FormatFloat) {
  EXPECT_EQ(formatFloat(1e-5), "1e-5");
  EXPECT_EQ(formatFloat(1e-12), "1e-12");
  EXPECT_EQ(formatFloat(0.5), "0.5");
  EXPECT_EQ(formatFloat(2), "2.0");
  EXPECT_EQ(formatFloat(1e20), "1e20");
  EXPECT_EQ(formatFloat(0.1), "0.1");
}

} // namespace
