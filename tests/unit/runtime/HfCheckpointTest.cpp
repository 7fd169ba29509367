//===- HfCheckpointTest.cpp - Hugging Face checkpoints under canonical names ---===//
//
// openWeights on small checkpoints written here: each family's layout
// conversions value by value, the folder, index and shard forms, and the
// messages for what does not fit.
//
//===----------------------------------------------------------------------===//
#include "runtime/half.h"
#include "runtime/hf_checkpoint.h"
#include "tests/unit/runtime/TempDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <numeric>

#include <sys/stat.h>

using namespace tmr;
using namespace tmr::test;
using testing::HasSubstr;
using testing::Not;

namespace {

/// A model's expected tensors, as a compiled model's manifest lists them.
struct Manifest {
  std::vector<std::string> names;
  std::vector<tmr_tensor_desc> descs;

  void add(const std::string &name, std::vector<int64_t> shape, tmr_dtype dtype = TMR_F32) {
    names.push_back(name);
    tmr_tensor_desc desc{};
    desc.rank = static_cast<int32_t>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d)
      desc.shape[d] = shape[d];
    desc.dtype = dtype;
    descs.push_back(desc);
  }
  /// Names point into `names`, which must not move afterwards.
  const tmr_tensor_desc *data() {
    for (size_t i = 0; i < descs.size(); ++i)
      descs[i].name = names[i].c_str();
    return descs.data();
  }
  int32_t count() const { return static_cast<int32_t>(descs.size()); }
};

/// 0, 1, 2, ... as f32: every element tells where it came from.
std::vector<float> iota(size_t n, float start = 0) {
  std::vector<float> values(n);
  std::iota(values.begin(), values.end(), start);
  return values;
}

const float *floats(const SafetensorsFile &file, const std::string &name) {
  const TensorView *view = file.find(name);
  EXPECT_NE(view, nullptr) << name;
  return view ? static_cast<const float *>(view->data) : nullptr;
}

/// GPT-2 with d_model 2: c_attn [2, 6] holds q, k and v as column thirds.
struct Gpt2 {
  std::vector<float> wte = iota(3 * 2), wpe = iota(6 * 2, 100), cAttn = iota(2 * 6, 200),
                     cAttnBias = iota(6, 300), mask = iota(4, 0);
  std::vector<TensorToWrite> tensors(const std::string &prefix) {
    return {{prefix + "wte.weight", TMR_F32, {3, 2}, wte.data()},
            {prefix + "wpe.weight", TMR_F32, {6, 2}, wpe.data()},
            {prefix + "h.0.attn.c_attn.weight", TMR_F32, {2, 6}, cAttn.data()},
            {prefix + "h.0.attn.c_attn.bias", TMR_F32, {6}, cAttnBias.data()},
            {prefix + "h.0.attn.bias", TMR_F32, {1, 1, 2, 2}, mask.data()}};
  }
  static Manifest manifest() {
    Manifest m;
    m.add("embed.tokens", {3, 2});
    m.add("embed.positions", {4, 2}); // max_seq 4 of the table's 6 rows
    for (const char *part : {"q", "k", "v"}) {
      m.add(std::string("decoder.layers.0.self_attn.") + part + ".weight", {2, 2});
      m.add(std::string("decoder.layers.0.self_attn.") + part + ".bias", {2});
    }
    return m;
  }
};

TEST(HfCheckpoint, Gpt2Conv1DIsTransposedAndCAttnCutIntoQkv) {
  TempDir dir;
  Gpt2 gpt2;
  ASSERT_TRUE(
      writeSafetensors(dir.file("model.safetensors"), gpt2.tensors("transformer."), nullptr));
  Manifest m = Gpt2::manifest();
  std::string error;
  auto file = openWeights(dir.path(), "gpt2", m.data(), m.count(), &error, false);
  ASSERT_NE(file, nullptr) << error;
  // q.weight[o][i] = c_attn[i][part * 2 + o].
  for (int part = 0; part < 3; ++part) {
    const char *name = part == 0 ? "q" : part == 1 ? "k" : "v";
    const float *w = floats(*file, std::string("decoder.layers.0.self_attn.") + name + ".weight");
    const float *b = floats(*file, std::string("decoder.layers.0.self_attn.") + name + ".bias");
    ASSERT_TRUE(w && b);
    for (int o = 0; o < 2; ++o) {
      EXPECT_EQ(b[o], gpt2.cAttnBias[part * 2 + o]);
      for (int i = 0; i < 2; ++i)
        EXPECT_EQ(w[o * 2 + i], gpt2.cAttn[i * 6 + part * 2 + o]) << name << " " << o << i;
    }
  }
  const TensorView *positions = file->find("embed.positions");
  ASSERT_NE(positions, nullptr);
  EXPECT_EQ(positions->shape, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(static_cast<const float *>(positions->data)[7], gpt2.wpe[7]);
}

TEST(HfCheckpoint, BaseModelCheckpointsHaveNoPrefix) {
  TempDir dir;
  Gpt2 gpt2;
  ASSERT_TRUE(writeSafetensors(dir.file("model.safetensors"), gpt2.tensors(""), nullptr));
  Manifest m = Gpt2::manifest();
  std::string error;
  EXPECT_NE(openWeights(dir.file("model.safetensors"), "gpt2", m.data(), m.count(), &error, false),
            nullptr)
      << error;
}

TEST(HfCheckpoint, NamesMissingUnexpectedAndMisshapenTensors) {
  TempDir dir;
  Gpt2 gpt2;
  std::vector<TensorToWrite> tensors = gpt2.tensors("transformer.");
  std::vector<float> extra = iota(2), shortBias = iota(5);
  tensors.push_back({"transformer.h.1.ln_1.weight", TMR_F32, {2}, extra.data()});
  tensors[3] = {"transformer.h.0.attn.c_attn.bias", TMR_F32, {5}, shortBias.data()};
  tensors.erase(tensors.begin() + 1); // wpe
  ASSERT_TRUE(writeSafetensors(dir.file("model.safetensors"), tensors, nullptr));
  Manifest m = Gpt2::manifest();
  std::string error;
  EXPECT_EQ(openWeights(dir.path(), "gpt2", m.data(), m.count(), &error, false), nullptr);
  EXPECT_THAT(error, HasSubstr("model.safetensors: missing tensor 'transformer.wpe.weight' "
                               "(huggingface(gpt2)), which tmc reads as 'embed.positions' F32 "
                               "[4, 2]"));
  EXPECT_THAT(error, HasSubstr("tensor 'transformer.h.0.attn.c_attn.bias' (huggingface(gpt2), "
                               "tmc's 'decoder.layers.0.self_attn.q.bias') has shape [5], "
                               "expected [6]"));
  EXPECT_THAT(error, HasSubstr("unexpected tensor 'transformer.h.1.ln_1.weight'"));
}

TEST(HfCheckpoint, ATiedHeadMayBeSavedOnlyAsACopyOfTheTokenTable) {
  TempDir dir;
  Gpt2 gpt2;
  std::vector<TensorToWrite> tensors = gpt2.tensors("transformer.");
  std::vector<float> head = gpt2.wte;
  tensors.push_back({"lm_head.weight", TMR_F32, {3, 2}, head.data()});
  ASSERT_TRUE(writeSafetensors(dir.file("model.safetensors"), tensors, nullptr));
  Manifest m = Gpt2::manifest();
  std::string error;
  EXPECT_NE(openWeights(dir.path(), "gpt2", m.data(), m.count(), &error, false), nullptr) << error;

  head[0] += 1;
  ASSERT_TRUE(writeSafetensors(dir.file("model.safetensors"), tensors, nullptr));
  EXPECT_EQ(openWeights(dir.path(), "gpt2", m.data(), m.count(), &error, false), nullptr);
  EXPECT_THAT(error, HasSubstr("'lm_head.weight' is the checkpoint's own LM head"));
  EXPECT_THAT(error, HasSubstr("write output = lm_head(tied = false)"));
}

TEST(HfCheckpoint, ShardsListedByTheIndexAreReadTogether) {
  TempDir dir;
  Gpt2 gpt2;
  std::vector<TensorToWrite> tensors = gpt2.tensors("transformer.");
  ASSERT_TRUE(writeSafetensors(dir.file("model-00001-of-00002.safetensors"),
                               {tensors.begin(), tensors.begin() + 2}, nullptr));
  ASSERT_TRUE(writeSafetensors(dir.file("model-00002-of-00002.safetensors"),
                               {tensors.begin() + 2, tensors.end()}, nullptr));
  std::string map;
  for (size_t t = 0; t < tensors.size(); ++t)
    map += (t ? ", \"" : "\"") + tensors[t].name + "\": \"model-0000" + (t < 2 ? "1" : "2") +
           "-of-00002.safetensors\"";
  writeBytes(dir.file("model.safetensors.index.json"),
             "{\"metadata\": {\"total_size\": 1}, \"weight_map\": {" + map + "}}");
  Manifest m = Gpt2::manifest();
  std::string error;
  auto file = openWeights(dir.path(), "gpt2", m.data(), m.count(), &error, false);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(floats(*file, "decoder.layers.0.self_attn.v.bias")[1], gpt2.cAttnBias[5]);

  std::filesystem::remove(dir.file("model-00002-of-00002.safetensors"));
  EXPECT_EQ(openWeights(dir.path(), "gpt2", m.data(), m.count(), &error, false), nullptr);
  EXPECT_THAT(error, HasSubstr("model.safetensors.index.json: \"weight_map\" names shard "
                               "'model-00002-of-00002.safetensors', which does not exist"));

  writeBytes(dir.file("model.safetensors.index.json"),
             "{\"weight_map\": {\"x\": \"../model.safetensors\"}}");
  EXPECT_EQ(openWeights(dir.path(), "gpt2", m.data(), m.count(), &error, false), nullptr);
  EXPECT_THAT(error, HasSubstr("not a file in the index's folder"));
}

TEST(HfCheckpoint, AFolderWithoutWeightsIsNamed) {
  TempDir dir;
  Manifest m = Gpt2::manifest();
  std::string error;
  EXPECT_EQ(openWeights(dir.path(), "gpt2", m.data(), m.count(), &error, false), nullptr);
  EXPECT_THAT(error, HasSubstr(dir.path() + ": a Hugging Face checkpoint folder holds "
                                            "model.safetensors or model.safetensors.index.json"));
}

/// An index that is a FIFO would block a plain open until a writer came.
TEST(HfCheckpoint, AnIndexThatIsNotARegularFileIsRefused) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("model.safetensors.index.json").c_str(), 0600), 0);
  Manifest m = Gpt2::manifest();
  std::string error;
  EXPECT_EQ(openWeights(dir.path(), "gpt2", m.data(), m.count(), &error, false), nullptr);
  EXPECT_THAT(error, HasSubstr("model.safetensors.index.json: not a regular file"));
}

/// BERT's position_ids buffer is I64, which no kernel reads: skipped.
TEST(HfCheckpoint, BuffersOfOtherDtypesAreSkippedByName) {
  TempDir dir;
  std::vector<float> tokens = iota(4 * 2), gamma = iota(2, 10), beta = iota(2, 20);
  ASSERT_TRUE(
      writeSafetensors(dir.file("plain.safetensors"),
                       {{"embeddings.word_embeddings.weight", TMR_F32, {4, 2}, tokens.data()},
                        {"embeddings.LayerNorm.gamma", TMR_F32, {2}, gamma.data()},
                        {"embeddings.LayerNorm.beta", TMR_F32, {2}, beta.data()}},
                       nullptr));
  // The same file with an I64 [1, 3] tensor added to its header and data.
  std::string bytes = readBytes(dir.file("plain.safetensors"));
  uint64_t headerSize = 0;
  std::memcpy(&headerSize, bytes.data(), 8);
  std::string header = bytes.substr(8, headerSize), data = bytes.substr(8 + headerSize);
  header = header.substr(0, header.find_last_not_of(' ') + 1);
  header.pop_back(); // the closing brace
  header += ",\"embeddings.position_ids\":{\"dtype\":\"I64\",\"shape\":[1,3],\"data_offsets\":[" +
            std::to_string(data.size()) + "," + std::to_string(data.size() + 24) + "]}}";
  uint64_t newSize = header.size();
  std::string file(reinterpret_cast<const char *>(&newSize), 8);
  writeBytes(dir.file("model.safetensors"), file + header + data + std::string(24, '\0'));

  Manifest m;
  m.add("embed.tokens", {4, 2});
  m.add("embed.norm.weight", {2});
  m.add("embed.norm.bias", {2});
  std::string error;
  auto opened =
      openWeights(dir.file("model.safetensors"), "bert", m.data(), m.count(), &error, false);
  ASSERT_NE(opened, nullptr) << error;
  EXPECT_EQ(floats(*opened, "embed.norm.bias")[1], 21.0f); // `beta`, the old spelling
}

TEST(HfCheckpoint, LlamaBiasesTheCheckpointLeavesOutAreZeros) {
  TempDir dir;
  std::vector<float> tokens = iota(4 * 2), q = iota(2 * 2), qBias = iota(2, 5), o = iota(4);
  ASSERT_TRUE(writeSafetensors(dir.file("model.safetensors"),
                               {{"embed_tokens.weight", TMR_F32, {4, 2}, tokens.data()},
                                {"layers.0.self_attn.q_proj.weight", TMR_F32, {2, 2}, q.data()},
                                {"layers.0.self_attn.q_proj.bias", TMR_F32, {2}, qBias.data()},
                                {"layers.0.self_attn.o_proj.weight", TMR_F32, {2, 2}, o.data()}},
                               nullptr));
  Manifest m;
  m.add("embed.tokens", {4, 2});
  m.add("decoder.layers.0.self_attn.q.weight", {2, 2});
  m.add("decoder.layers.0.self_attn.q.bias", {2});
  m.add("decoder.layers.0.self_attn.o.weight", {2, 2});
  m.add("decoder.layers.0.self_attn.o.bias", {2});
  std::string error;
  auto file = openWeights(dir.path(), "llama", m.data(), m.count(), &error, false);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(floats(*file, "decoder.layers.0.self_attn.q.bias")[1], 6.0f);
  EXPECT_EQ(floats(*file, "decoder.layers.0.self_attn.o.bias")[0], 0.0f);
  EXPECT_EQ(floats(*file, "decoder.layers.0.self_attn.o.bias")[1], 0.0f);
}

TEST(HfCheckpoint, NarrowCheckpointsWidenAndWideOnesAreNotNarrowed) {
  TempDir dir;
  std::vector<uint16_t> tokens = {floatToBfloat16(1.5f), floatToBfloat16(-2.0f)};
  ASSERT_TRUE(writeSafetensors(dir.file("model.safetensors"),
                               {{"embed_tokens.weight", TMR_BF16, {1, 2}, tokens.data()}},
                               nullptr));
  Manifest m;
  m.add("embed.tokens", {1, 2});
  std::string error;
  auto file = openWeights(dir.path(), "llama", m.data(), m.count(), &error, false);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(file->find("embed.tokens")->dtype, TMR_F32);
  EXPECT_EQ(floats(*file, "embed.tokens")[1], -2.0f);

  std::vector<int8_t> bytes = {3, -4};
  ASSERT_TRUE(writeSafetensors(dir.file("model.safetensors"),
                               {{"embed_tokens.weight", TMR_I8, {1, 2}, bytes.data()}}, nullptr));
  EXPECT_EQ(openWeights(dir.path(), "llama", m.data(), m.count(), &error, false), nullptr);
  EXPECT_THAT(error, HasSubstr("has dtype I8, expected F32, F16 or BF16"));

  std::vector<float> wide = {1.5f, -2.0f};
  ASSERT_TRUE(writeSafetensors(dir.file("model.safetensors"),
                               {{"embed_tokens.weight", TMR_F32, {1, 2}, wide.data()}}, nullptr));
  Manifest narrow;
  narrow.add("embed.tokens", {1, 2}, TMR_BF16);
  EXPECT_EQ(openWeights(dir.path(), "llama", narrow.data(), narrow.count(), &error, false),
            nullptr);
  EXPECT_THAT(error, HasSubstr("has dtype F32, but the model stores BF16: write dtype = f32"));
}

TEST(HfCheckpoint, ACanonicalFileLoadsAsItIs) {
  TempDir dir;
  std::vector<float> tokens = iota(4 * 2);
  ASSERT_TRUE(writeSafetensors(dir.file("w.safetensors"),
                               {{"embed.tokens", TMR_F32, {4, 2}, tokens.data()}}, nullptr));
  Manifest m;
  m.add("embed.tokens", {4, 2});
  std::string error;
  auto file = openWeights(dir.file("w.safetensors"), "llama", m.data(), m.count(), &error, false);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(floats(*file, "embed.tokens")[7], 7.0f);
}

TEST(HfCheckpoint, AnotherFamilysCheckpointIsSaidToBeOne) {
  TempDir dir;
  Gpt2 gpt2;
  ASSERT_TRUE(
      writeSafetensors(dir.file("model.safetensors"), gpt2.tensors("transformer."), nullptr));
  Manifest m;
  m.add("embed.tokens", {3, 2});
  std::string error;
  EXPECT_EQ(openWeights(dir.path(), "llama", m.data(), m.count(), &error, false), nullptr);
  EXPECT_THAT(error, HasSubstr("no tensor 'embed_tokens.weight' or 'model.embed_tokens.weight': "
                               "not a Hugging Face llama checkpoint"));
  EXPECT_THAT(error, Not(HasSubstr("\n")));
}

} // namespace
