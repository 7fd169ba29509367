//===- ManifestTest.cpp - Canonical tensor names for every architecture ---===//

#include "TestSpecs.h"

#include "frontend/Manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>

using namespace tmc;
using namespace tmc::test;
using ::testing::Contains;
using ::testing::ElementsAreArray;
using ::testing::Not;

namespace {

using Entry = std::pair<std::string, std::vector<int64_t>>;

std::vector<Entry> manifestOf(const std::string &source, DType dtype = DType::F32) {
  Loaded loaded = load(source);
  EXPECT_TRUE(loaded.result.ok()) << loaded.diagnostics;
  std::vector<Entry> entries;
  if (!loaded.result.ok())
    return entries;
  for (const TensorSpec &tensor : buildManifest(*loaded.result.spec)) {
    EXPECT_EQ(tensor.dtype, dtype) << tensor.name;
    entries.emplace_back(tensor.name, tensor.shape);
  }
  return entries;
}

std::vector<std::string> namesOf(const std::vector<Entry> &entries) {
  std::vector<std::string> names;
  for (const Entry &entry : entries)
    names.push_back(entry.first);
  return names;
}

TEST(ManifestTest, DecoderOnlyWithTiedHead) {
  std::vector<Entry> m = manifestOf("model m {\n vocab = 10; d_model = 8; max_seq = 4\n"
                                    " position = learned; output = lm_head(tied = true)\n"
                                    " decoder { layers = 1; heads = 2; bias = false\n"
                                    "   norm = pre(layernorm); final_norm = rmsnorm }\n}\n");
  std::vector<Entry> expected = {
      {"embed.tokens", {10, 8}},
      {"embed.positions", {4, 8}},
      {"decoder.layers.0.self_attn.q.weight", {8, 8}},
      {"decoder.layers.0.self_attn.k.weight", {8, 8}},
      {"decoder.layers.0.self_attn.v.weight", {8, 8}},
      {"decoder.layers.0.self_attn.o.weight", {8, 8}},
      {"decoder.layers.0.norm1.weight", {8}},
      {"decoder.layers.0.norm1.bias", {8}},
      {"decoder.layers.0.ffn.up.weight", {32, 8}},
      {"decoder.layers.0.ffn.down.weight", {8, 32}},
      {"decoder.layers.0.norm2.weight", {8}},
      {"decoder.layers.0.norm2.bias", {8}},
      {"decoder.final_norm.weight", {8}}, // rmsnorm has no bias
  };
  EXPECT_EQ(m, expected);
}

TEST(ManifestTest, CrossAttentionAndNormNumbering) {
  std::vector<Entry> m = manifestOf("model m {\n vocab = 10; d_model = 8; max_seq = 4\n"
                                    " encoder { layers = 1; heads = 2; d_ff = 16 }\n"
                                    " decoder { layers = 1; heads = 2; kv_heads = 1; d_ff = 16 }\n"
                                    "}\n");
  std::vector<std::string> decoder;
  for (const Entry &entry : m)
    if (llvm::StringRef(entry.first).starts_with("decoder."))
      decoder.push_back(entry.first);
  std::vector<std::string> expected;
  for (const char *part : {"self_attn", "norm1", "cross_attn", "norm2", "ffn", "norm3"}) {
    std::string p = std::string("decoder.layers.0.") + part;
    if (llvm::StringRef(part).ends_with("attn")) {
      for (const char *proj : {".q", ".k", ".v", ".o"}) {
        expected.push_back(p + proj + ".weight");
        expected.push_back(p + proj + ".bias");
      }
    } else if (std::string(part) == "ffn") {
      for (const char *proj : {".up", ".down"}) {
        expected.push_back(p + proj + ".weight");
        expected.push_back(p + proj + ".bias");
      }
    } else {
      expected.push_back(p + ".weight");
      expected.push_back(p + ".bias");
    }
  }
  EXPECT_THAT(decoder, ElementsAreArray(expected));
  // The encoder has no cross-attention; its layers end with norm2.
  EXPECT_THAT(namesOf(m), Contains("encoder.layers.0.norm2.bias"));
  EXPECT_THAT(namesOf(m), Not(Contains("encoder.layers.0.norm3.weight")));
  // Cross-attention keys and values come from the encoder's d_model-wide
  // output, in the decoder layer's grouped-query shape.
  for (const Entry &entry : m) {
    if (entry.first == "decoder.layers.0.cross_attn.k.weight")
      EXPECT_EQ(entry.second, (std::vector<int64_t>{4, 8}));
    if (entry.first == "decoder.layers.0.cross_attn.q.weight")
      EXPECT_EQ(entry.second, (std::vector<int64_t>{8, 8}));
  }
  // One token table, shared, and no second one.
  EXPECT_THAT(namesOf(m), Not(Contains(kDecoderTokens)));
}

TEST(ManifestTest, UnsharedEmbeddingsGiveTheDecoderItsOwnTable) {
  std::vector<Entry> m = manifestOf("model m {\n vocab = 10; d_model = 8; max_seq = 4\n"
                                    " share_embeddings = false\n"
                                    " encoder { layers = 1; heads = 2 }\n"
                                    " decoder { layers = 1; heads = 2 }\n}\n");
  ASSERT_GE(m.size(), 2u);
  EXPECT_EQ(m[0], (Entry{"embed.tokens", {10, 8}}));
  EXPECT_EQ(m[1], (Entry{"decoder.embed.tokens", {10, 8}}));
}

TEST(ManifestTest, OutputHeads) {
  std::vector<Entry> untied = manifestOf(encoderSpec("  output = lm_head(tied = false)\n"));
  EXPECT_EQ(untied.back(), (Entry{"output.weight", {100, 64}}));
  EXPECT_THAT(namesOf(untied), Not(Contains("output.bias")));
  std::vector<Entry> bias =
      manifestOf(encoderSpec("  output = lm_head(tied = false, bias = true)\n"));
  EXPECT_EQ(bias[bias.size() - 2], (Entry{"output.weight", {100, 64}}));
  EXPECT_EQ(bias.back(), (Entry{"output.bias", {100}}));
  std::vector<Entry> tiedBias = manifestOf(encoderSpec("  output = lm_head(bias = true)\n"));
  EXPECT_EQ(tiedBias.back(), (Entry{"output.bias", {100}}));
  EXPECT_THAT(namesOf(tiedBias), Not(Contains("output.weight")));
  // A classifier keeps its bias even when the stack's linear layers drop theirs.
  std::vector<Entry> classifier = manifestOf(
      encoderSpec("  output = classifier(classes = 3)\n", "layers = 1\nheads = 4\nbias = false\n"));
  EXPECT_EQ(classifier[classifier.size() - 2], (Entry{"classifier.weight", {3, 64}}));
  EXPECT_EQ(classifier.back(), (Entry{"classifier.bias", {3}}));
  EXPECT_THAT(namesOf(classifier), Not(Contains("encoder.layers.0.ffn.up.bias")));
}

TEST(ManifestTest, EmbeddingExtras) {
  std::vector<Entry> m = manifestOf(encoderSpec("  segments = 2\n"
                                                "  embed_norm = rmsnorm(eps = 1e-6)\n"));
  ASSERT_GE(m.size(), 3u);
  EXPECT_EQ(m[1], (Entry{"embed.segments", {2, 64}}));
  EXPECT_EQ(m[2], (Entry{"embed.norm.weight", {64}}));
  EXPECT_NE(m[3].first, "embed.norm.bias");
}

TEST(ManifestTest, LinformerProjections) {
  std::vector<Entry> m =
      manifestOf(encoderSpec("", "layers = 1\nheads = 4\nattention = linformer(k = 8)\n"));
  std::vector<std::string> names = namesOf(m);
  auto at = std::find(names.begin(), names.end(), "encoder.layers.0.self_attn.o.bias");
  ASSERT_NE(at, names.end());
  size_t index = static_cast<size_t>(at - names.begin());
  EXPECT_EQ(m[index + 1], (Entry{"encoder.layers.0.attn_proj.k.weight", {8, 32}}));
  EXPECT_EQ(m[index + 2], (Entry{"encoder.layers.0.attn_proj.v.weight", {8, 32}}));
  EXPECT_EQ(m[index + 3].first, "encoder.layers.0.norm1.weight");
}

TEST(ManifestTest, ShapesFollowEachLayersOverride) {
  std::vector<Entry> m = manifestOf(
      encoderSpec("", "layers = 3\nheads = 4\nd_ff = 16\n"
                      "layers 1..1 { heads = 2; head_dim = 8; ffn = swiglu; d_ff = 24 }\n"
                      "layers 2..2 { norm = post(rmsnorm) }\n"));
  auto shape = [&](const std::string &name) {
    for (const Entry &entry : m)
      if (entry.first == name)
        return entry.second;
    ADD_FAILURE() << name << " is not in the manifest";
    return std::vector<int64_t>();
  };
  EXPECT_EQ(shape("encoder.layers.0.self_attn.q.weight"), (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(shape("encoder.layers.1.self_attn.q.weight"), (std::vector<int64_t>{16, 64}));
  EXPECT_EQ(shape("encoder.layers.1.self_attn.o.weight"), (std::vector<int64_t>{64, 16}));
  EXPECT_EQ(shape("encoder.layers.1.ffn.gate.weight"), (std::vector<int64_t>{24, 64}));
  EXPECT_EQ(shape("encoder.layers.1.ffn.down.weight"), (std::vector<int64_t>{64, 24}));
  EXPECT_EQ(shape("encoder.layers.0.ffn.up.weight"), (std::vector<int64_t>{16, 64}));
  std::vector<std::string> names = namesOf(m);
  EXPECT_THAT(names, Not(Contains("encoder.layers.0.ffn.gate.weight")));
  EXPECT_THAT(names, Contains("encoder.layers.1.norm2.bias"));
  EXPECT_THAT(names, Not(Contains("encoder.layers.2.norm2.bias"))); // rmsnorm
  EXPECT_THAT(names, Contains("encoder.layers.2.norm2.weight"));
}

TEST(ManifestTest, EveryTensorHasTheModelDType) {
  for (auto [text, dtype] : {std::pair{"f16", DType::F16}, std::pair{"bf16", DType::BF16}}) {
    std::vector<Entry> m = manifestOf(
        encoderSpec(std::string("  dtype = ") + text + "\n  output = classifier(classes = 2)\n"),
        dtype);
    EXPECT_FALSE(m.empty());
  }
  EXPECT_STREQ(safetensorsDType(DType::BF16), "BF16");
}

TEST(ManifestTest, OrderIsStable) {
  std::string source = encoderSpec("  output = lm_head(tied = false)\n",
                                   "layers = 2\nheads = 4\nlayers 1..1 { ffn = geglu }\n");
  EXPECT_EQ(manifestOf(source), manifestOf(source));
}

} // namespace
