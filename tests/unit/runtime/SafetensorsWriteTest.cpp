//===- SafetensorsWriteTest.cpp - writeSafetensors and checkTensors -------===//
//
// Round trips through the writer and the reader, atomicity of the writer, and
// the messages a user sees when a weight file does not fit the model.
//
//===----------------------------------------------------------------------===//
#include "runtime/safetensors.h"
#include "tests/unit/runtime/TempDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

using namespace tmr;
using namespace tmr::test;
using testing::ElementsAre;
using testing::HasSubstr;

namespace {

TEST(SafetensorsWrite, RoundTripsF32AndF16) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  std::vector<float> matrix = {1, 2, 3, -4.5f, 1e-7f, 6};
  std::vector<uint16_t> halves = {0x3c00, 0xc000, 0x7bff, 0x0001, 0x8000};
  float scalar = 42;
  ASSERT_TRUE(writeSafetensors(path,
                               {{"layer.0.w", TMR_F32, {2, 3}, matrix.data()},
                                {"h", TMR_F16, {5}, halves.data()},
                                {"s", TMR_BF16, {0}, nullptr},
                                {"scalar", TMR_F32, {}, &scalar}},
                               nullptr));

  // The data section must start 8-byte aligned so F32 data can be used in place.
  std::string bytes = readBytes(path);
  uint64_t headerSize = 0;
  std::memcpy(&headerSize, bytes.data(), 8);
  EXPECT_EQ((8 + headerSize) % 8, 0u);
  EXPECT_EQ(bytes.size(), 8 + headerSize + 6 * 4 + 5 * 2 + 4);

  std::string error;
  auto file = SafetensorsFile::open(path, &error);
  ASSERT_NE(file, nullptr) << error;
  ASSERT_EQ(file->tensors().size(), 4u);
  EXPECT_EQ(file->tensors()[0].name, "layer.0.w");
  EXPECT_EQ(file->tensors()[1].name, "h");
  const TensorView *w = file->find("layer.0.w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, TMR_F32);
  EXPECT_THAT(w->shape, ElementsAre(2, 3));
  ASSERT_EQ(w->bytes, 24u);
  EXPECT_EQ(std::memcmp(w->data, matrix.data(), 24), 0);
  // Written by this writer, the data is used in place: aligned, not copied.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w->data) % 8, 0u);
  const TensorView *h = file->find("h");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->dtype, TMR_F16);
  EXPECT_THAT(h->shape, ElementsAre(5));
  ASSERT_EQ(h->bytes, 10u);
  EXPECT_EQ(std::memcmp(h->data, halves.data(), 10), 0);
  EXPECT_EQ(file->find("s")->dtype, TMR_BF16);
  EXPECT_EQ(file->find("s")->bytes, 0u);
  EXPECT_TRUE(file->find("scalar")->shape.empty());
  EXPECT_EQ(*static_cast<const float *>(file->find("scalar")->data), 42.0f);
  EXPECT_EQ(file->find("missing"), nullptr);
}

TEST(SafetensorsWrite, OverwritesAndLeavesNoTempFiles) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  float one = 1, two = 2;
  ASSERT_TRUE(writeSafetensors(path, {{"a", TMR_F32, {1}, &one}}, nullptr));
  ASSERT_TRUE(writeSafetensors(path, {{"b", TMR_F32, {1}, &two}}, nullptr));
  EXPECT_THAT(dir.list(), ElementsAre("w.safetensors"));
  auto file = SafetensorsFile::open(path, nullptr);
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->find("a"), nullptr);
  EXPECT_EQ(*static_cast<const float *>(file->find("b")->data), 2.0f);
}

/// What `tmc quantize` does when its input was truncated while it read it:
/// the written file never appears, and one already at the path stays.
TEST(SafetensorsWrite, ARefusalBeforeCommitLeavesTheOldFile) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  float one = 1, two = 2;
  ASSERT_TRUE(writeSafetensors(path, {{"a", TMR_F32, {1}, &one}}, nullptr));
  std::string error;
  bool asked = false;
  EXPECT_FALSE(
      writeSafetensors(path, {{"b", TMR_F32, {1}, &two}}, &error, [&](std::string *problem) {
        asked = true;
        *problem = "in.safetensors was truncated";
        return false;
      }));
  EXPECT_TRUE(asked);
  EXPECT_EQ(error, "in.safetensors was truncated");
  EXPECT_THAT(dir.list(), ElementsAre("w.safetensors"));
  auto file = SafetensorsFile::open(path, nullptr);
  ASSERT_NE(file, nullptr);
  EXPECT_NE(file->find("a"), nullptr);
  ASSERT_TRUE(writeSafetensors(path, {{"b", TMR_F32, {1}, &two}}, nullptr,
                               [](std::string *) { return true; }));
  file = SafetensorsFile::open(path, nullptr);
  ASSERT_NE(file, nullptr);
  EXPECT_NE(file->find("b"), nullptr);
}

TEST(SafetensorsWrite, MissingDirectoryLeavesNothing) {
  TempDir dir;
  float one = 1;
  std::string path = dir.file("missing/w.safetensors");
  std::string error;
  EXPECT_FALSE(writeSafetensors(path, {{"a", TMR_F32, {1}, &one}}, &error));
  EXPECT_THAT(error, HasSubstr("cannot create '" + path + "': No such file or directory"));
  EXPECT_TRUE(dir.list().empty());
}

TEST(SafetensorsWrite, InvalidTensorsLeaveNothing) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  float one = 1;
  std::string error;
  EXPECT_FALSE(writeSafetensors(path, {{"a", TMR_F32, {2, -1}, &one}}, &error));
  EXPECT_THAT(error, HasSubstr("tensor 'a' has negative dimension -1"));
  EXPECT_FALSE(
      writeSafetensors(path, {{"a", TMR_F32, {1}, &one}, {"a", TMR_F32, {1}, &one}}, &error));
  EXPECT_THAT(error, HasSubstr("tensor 'a' is given more than once"));
  EXPECT_FALSE(writeSafetensors(path, {{"__metadata__", TMR_F32, {1}, &one}}, &error));
  EXPECT_THAT(error, HasSubstr("'__metadata__' is reserved"));
  EXPECT_FALSE(writeSafetensors(path, {{"a", TMR_F32, {3}, nullptr}}, &error));
  EXPECT_THAT(error, HasSubstr("tensor 'a' has no data"));
  EXPECT_TRUE(dir.list().empty());
}

TEST(SafetensorsWrite, TargetIsADirectory) {
  TempDir dir;
  float one = 1;
  std::string error;
  EXPECT_FALSE(writeSafetensors(dir.path(), {{"a", TMR_F32, {1}, &one}}, &error));
  EXPECT_THAT(error, HasSubstr("cannot create"));
}

class SafetensorsCheck : public testing::Test {
protected:
  void SetUp() override {
    std::vector<float> zeros(64, 0.0f);
    path_ = dir_.file("weights.safetensors");
    ASSERT_TRUE(writeSafetensors(path_,
                                 {{"embed.tokens", TMR_F32, {10, 4}, zeros.data()},
                                  {"ffn.up.weight", TMR_F32, {8, 4}, zeros.data()},
                                  {"norm.bias", TMR_F16, {4}, zeros.data()}},
                                 nullptr));
    file_ = SafetensorsFile::open(path_, nullptr);
    ASSERT_NE(file_, nullptr);
  }
  bool check(const std::vector<tmr_tensor_desc> &expected, std::string *error) {
    return checkTensors(*file_, "weights.safetensors", expected.data(),
                        static_cast<int32_t>(expected.size()), error);
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<SafetensorsFile> file_;
};

TEST_F(SafetensorsCheck, AcceptsMatchingFile) {
  std::string error;
  EXPECT_TRUE(check({{"embed.tokens", 2, {10, 4}, TMR_F32},
                     {"ffn.up.weight", 2, {8, 4}, TMR_F32},
                     {"norm.bias", 1, {4}, TMR_F16}},
                    &error))
      << error;
}

TEST_F(SafetensorsCheck, NamesEveryMismatch) {
  std::string error;
  EXPECT_FALSE(check({{"embed.tokens", 2, {10, 4}, TMR_F32},
                      {"ffn.up.weight", 2, {16, 4}, TMR_F32},
                      {"norm.bias", 1, {4}, TMR_F32},
                      {"norm.weight", 1, {4}, TMR_F32}},
                     &error));
  EXPECT_EQ(error,
            "weights.safetensors: tensor 'ffn.up.weight' has shape [8, 4], expected [16, 4]\n"
            "weights.safetensors: tensor 'norm.bias' has dtype F16, expected F32\n"
            "weights.safetensors: missing tensor 'norm.weight' (expected F32 [4])");
}

TEST_F(SafetensorsCheck, RejectsUnexpectedTensorAndRankMismatch) {
  std::string error;
  EXPECT_FALSE(
      check({{"embed.tokens", 3, {10, 4, 1}, TMR_F32}, {"norm.bias", 1, {4}, TMR_F16}}, &error));
  EXPECT_THAT(error, HasSubstr("tensor 'embed.tokens' has shape [10, 4], expected [10, 4, 1]"));
  EXPECT_THAT(error, HasSubstr("weights.safetensors: unexpected tensor 'ffn.up.weight' (not in "
                               "the model's manifest)"));
}

TEST_F(SafetensorsCheck, RejectsInvalidManifest) {
  std::string error;
  EXPECT_FALSE(check({{nullptr, 1, {4}, TMR_F32}}, &error));
  EXPECT_THAT(error, HasSubstr("manifest entry 0 is invalid"));
  EXPECT_FALSE(check({{"x", 9, {4}, TMR_F32}}, &error));
  EXPECT_THAT(error, HasSubstr("manifest entry 0 is invalid"));
}

TEST(SafetensorsFormat, DtypesAndShapes) {
  EXPECT_STREQ(dtypeName(TMR_BF16), "BF16");
  EXPECT_EQ(dtypeSize(TMR_F32), 4u);
  EXPECT_EQ(dtypeSize(TMR_F16), 2u);
  EXPECT_EQ(formatShape({64, 32}), "[64, 32]");
  EXPECT_EQ(formatShape({}), "[]");
}

} // namespace
