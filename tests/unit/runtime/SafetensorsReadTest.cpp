//===- SafetensorsReadTest.cpp - Validation in SafetensorsFile::open -------===//
//
// Every malformed-file case is a hand-made byte string, so each check in the
// reader is exercised without relying on the writer.
//
//===----------------------------------------------------------------------===//
#include "runtime/safetensors.h"
#include "tests/unit/runtime/TempDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <fcntl.h>
#include <unistd.h>

using namespace tmr;
using namespace tmr::test;
using testing::HasSubstr;

namespace {

std::string floatBytes(const std::vector<float> &values) {
  std::string out(values.size() * sizeof(float), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::vector<float> floatsOf(const TensorView &view) {
  std::vector<float> out(view.bytes / sizeof(float));
  std::memcpy(out.data(), view.data, view.bytes);
  return out;
}

struct BadFile {
  const char *name;
  std::string header;
  size_t dataBytes;
  const char *message;
};

void PrintTo(const BadFile &c, std::ostream *os) { *os << c.name; }

class SafetensorsOpen : public testing::TestWithParam<BadFile> {};

TEST_P(SafetensorsOpen, RejectsWithMessage) {
  TempDir dir;
  std::string path = dir.file("bad.safetensors");
  writeBytes(path, safetensorsBytes(GetParam().header, std::string(GetParam().dataBytes, '\0')));
  std::string error;
  EXPECT_EQ(SafetensorsFile::open(path, &error), nullptr);
  EXPECT_THAT(error, HasSubstr(path + ": "));
  EXPECT_THAT(error, HasSubstr(GetParam().message));
}

const BadFile kBadFiles[] = {
    {"NotJson", "{\"a\": ", 0, "header is not valid JSON"},
    {"EmptyHeader", "", 0, "header is not valid JSON"},
    {"NotAnObject", "[1, 2]", 0, "header is not a JSON object"},
    {"EntryNotObject", R"({"w": 3})", 0, "tensor 'w': entry is not a JSON object"},
    {"MissingDtype", R"({"w": {"shape": [1], "data_offsets": [0, 4]}})", 4,
     "tensor 'w': missing \"dtype\""},
    {"MissingShape", R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})", 4,
     "tensor 'w': missing \"shape\""},
    {"MissingOffsets", R"({"w": {"dtype": "F32", "shape": [1]}})", 4,
     "tensor 'w': missing \"data_offsets\""},
    {"DtypeNotString", R"({"w": {"dtype": 1, "shape": [1], "data_offsets": [0, 4]}})", 4,
     "tensor 'w': \"dtype\" is not a string"},
    {"ShapeNotArray", R"({"w": {"dtype": "F32", "shape": 1, "data_offsets": [0, 4]}})", 4,
     "tensor 'w': \"shape\" is not an array of integers"},
    {"ShapeFloat", R"({"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})", 4,
     "tensor 'w': \"shape\" is not an array of integers"},
    {"OffsetsOneNumber", R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [4]}})", 4,
     "\"data_offsets\" is not an array of two non-negative integers"},
    {"OffsetsNegative", R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}})", 4,
     "\"data_offsets\" is not an array of two non-negative integers"},
    {"UnknownDtype", R"({"w": {"dtype": "F33", "shape": [1], "data_offsets": [0, 4]}})", 4,
     "tensor 'w' has unknown dtype 'F33'"},
    {"UnsupportedDtype", R"({"w": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}})", 8,
     "tensor 'w' has unsupported dtype F64 (supported: F32, F16, BF16, I8, U8)"},
    {"NegativeDim", R"({"w": {"dtype": "F32", "shape": [2, -3], "data_offsets": [0, 4]}})", 4,
     "tensor 'w' has negative dimension -3"},
    {"BeginAfterEnd", R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})", 8,
     "tensor 'w' has data_offsets [8, 4] with begin > end"},
    {"EndBeyondData", R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 12,
     "tensor 'w' has data_offsets [0, 16] beyond the end of the data section (12 bytes)"},
    {"WrongByteSize", R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}})", 24,
     "tensor 'w' has 20 bytes (data_offsets [0, 20]) but F32 [2, 3] needs 24"},
    {"ShapeOverflow",
     R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 0]}})", 0,
     "tensor 'w' has shape [4294967296, 4294967296] whose byte size overflows 64 bits"},
    {"Overlap",
     R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
         "b": {"dtype": "F32", "shape": [4], "data_offsets": [12, 28]}})",
     28, "tensors 'a' [0, 16) and 'b' [12, 28) overlap"},
    {"DuplicateName",
     R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
         "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
     8, "header lists tensor 'a' more than once"},
};

INSTANTIATE_TEST_SUITE_P(SafetensorsBadFiles, SafetensorsOpen, testing::ValuesIn(kBadFiles),
                         [](const testing::TestParamInfo<BadFile> &info) {
                           return std::string(info.param.name);
                         });

std::string openError(const std::string &path) {
  std::string error;
  EXPECT_EQ(SafetensorsFile::open(path, &error), nullptr);
  return error;
}

TEST(SafetensorsOpenFile, RejectsTooShortFile) {
  TempDir dir;
  writeBytes(dir.file("short"), std::string("\x05\0\0\0", 4));
  EXPECT_THAT(openError(dir.file("short")), HasSubstr("short: file too short (4 bytes)"));
  writeBytes(dir.file("empty"), "");
  EXPECT_THAT(openError(dir.file("empty")), HasSubstr("file too short (0 bytes)"));
}

TEST(SafetensorsOpenFile, RejectsHeaderLongerThanFile) {
  TempDir dir;
  writeBytes(dir.file("w"), lengthPrefix(100) + "{}");
  EXPECT_THAT(openError(dir.file("w")),
              HasSubstr("header length 100 is larger than the rest of the file (2 bytes)"));
}

TEST(SafetensorsOpenFile, RejectsAbsurdHeaderLength) {
  // A sparse file large enough that the length fits, but beyond any sane header.
  TempDir dir;
  std::string path = dir.file("huge");
  writeBytes(path, lengthPrefix(200'000'000));
  ASSERT_EQ(::truncate(path.c_str(), 200'000'008), 0);
  EXPECT_THAT(openError(path),
              HasSubstr("header length 200000000 exceeds the limit of 100000000 bytes"));
}

TEST(SafetensorsOpenFile, RejectsMissingFileAndDirectory) {
  TempDir dir;
  EXPECT_THAT(openError(dir.file("nope.safetensors")),
              HasSubstr("nope.safetensors: cannot open: No such file or directory"));
  EXPECT_THAT(openError(dir.path()), HasSubstr("not a regular file"));
}

TEST(SafetensorsOpenFile, IgnoresMetadataAndAcceptsEmptyTensors) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  writeBytes(path, safetensorsBytes(R"({"__metadata__": {"format": "pt"},
      "empty": {"dtype": "F32", "shape": [0, 3], "data_offsets": [0, 0]},
      "w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})",
                                    floatBytes({1.5f, -2.0f})));
  std::string error;
  auto file = SafetensorsFile::open(path, &error);
  ASSERT_NE(file, nullptr) << error;
  ASSERT_EQ(file->tensors().size(), 2u);
  EXPECT_EQ(file->find("__metadata__"), nullptr);
  EXPECT_EQ(file->find("empty")->bytes, 0u);
  EXPECT_EQ(floatsOf(*file->find("w")), (std::vector<float>{1.5f, -2.0f}));
}

TEST(SafetensorsOpenFile, KeepsHeaderOrder) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  writeBytes(path, safetensorsBytes(R"({"z": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]},
      "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})",
                                    floatBytes({1, 2})));
  std::string error;
  auto file = SafetensorsFile::open(path, &error);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_EQ(file->tensors()[0].name, "z");
  EXPECT_EQ(file->tensors()[1].name, "a");
  EXPECT_EQ(floatsOf(*file->find("z")), std::vector<float>{2});
}

TEST(SafetensorsOpenFile, MisalignedDataIsCopiedAndCorrect) {
  // A 13-byte header puts the data section at offset 21; tensor 'b' also
  // starts 2 bytes into it, so neither F32 tensor is 4-byte aligned in the map.
  std::string header = R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},
      "h": {"dtype": "F16", "shape": [1], "data_offsets": [12, 14]},
      "b": {"dtype": "F32", "shape": [2, 1], "data_offsets": [14, 22]}})";
  while ((8 + header.size()) % 4 != 1)
    header += ' ';
  uint16_t half = 0x3c00; // 1.0 in F16
  std::string data = floatBytes({1.25f, -3.5f, 1e30f}) +
                     std::string(reinterpret_cast<char *>(&half), 2) + floatBytes({7.0f, -0.0f});
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  writeBytes(path, safetensorsBytes(header, data));
  std::string error;
  auto file = SafetensorsFile::open(path, &error);
  ASSERT_NE(file, nullptr) << error;
  for (const TensorView &t : file->tensors())
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data) % dtypeSize(t.dtype), 0u) << t.name;
  EXPECT_EQ(floatsOf(*file->find("a")), (std::vector<float>{1.25f, -3.5f, 1e30f}));
  EXPECT_EQ(floatsOf(*file->find("b")), (std::vector<float>{7.0f, -0.0f}));
  uint16_t readHalf = 0;
  std::memcpy(&readHalf, file->find("h")->data, 2);
  EXPECT_EQ(readHalf, half);
}

} // namespace

namespace {

TensorView viewOf(tmr_dtype dtype, std::vector<int64_t> shape, const void *data, size_t bytes) {
  TensorView view;
  view.name = "t";
  view.dtype = dtype;
  view.shape = std::move(shape);
  view.data = data;
  view.bytes = bytes;
  return view;
}

} // namespace

TEST(SafetensorsNonFinite, FindsNaNAndInfinityInEveryDtype) {
  std::vector<float> f32 = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(findNonFinite(viewOf(TMR_F32, {2, 3}, f32.data(), 24)).count, 0);
  f32[4] = std::numeric_limits<float>::infinity();
  f32[5] = std::numeric_limits<float>::quiet_NaN();
  NonFinite found = findNonFinite(viewOf(TMR_F32, {2, 3}, f32.data(), 24));
  EXPECT_EQ(found.count, 2);
  EXPECT_EQ(found.first, 4);
  EXPECT_FALSE(found.firstIsNaN);
  // The largest finite float and -0 are fine.
  std::vector<float> edge = {std::numeric_limits<float>::max(), -0.0f,
                             std::numeric_limits<float>::denorm_min()};
  EXPECT_EQ(findNonFinite(viewOf(TMR_F32, {3}, edge.data(), 12)).count, 0);

  // F16: 0x7c00 is +inf, 0x7e00 NaN, 0x7bff the largest finite value.
  std::vector<uint16_t> f16 = {0x3c00, 0x7bff, 0xfc00, 0x7e00};
  found = findNonFinite(viewOf(TMR_F16, {4}, f16.data(), 8));
  EXPECT_EQ(found.count, 2);
  EXPECT_EQ(found.first, 2);
  EXPECT_FALSE(found.firstIsNaN);
  // BF16: 0x7fc0 is NaN, 0x7f7f the largest finite value.
  std::vector<uint16_t> bf16 = {0x7f7f, 0x7fc0};
  found = findNonFinite(viewOf(TMR_BF16, {2}, bf16.data(), 4));
  EXPECT_EQ(found.count, 1);
  EXPECT_EQ(found.first, 1);
  EXPECT_TRUE(found.firstIsNaN);
}

TEST(SafetensorsNonFinite, WarningNamesTensorCountAndIndex) {
  std::vector<float> values(12, 1.0f);
  values[7] = std::numeric_limits<float>::quiet_NaN(); // [1, 3] of [3, 4]
  values[11] = -std::numeric_limits<float>::infinity();
  std::string header = R"({"ok": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
      "w": {"dtype": "F32", "shape": [3, 4], "data_offsets": [4, 52]}})";
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  writeBytes(path, safetensorsBytes(header, floatBytes({0.5f}) + floatBytes(values)));
  std::string error;
  auto file = SafetensorsFile::open(path, &error);
  ASSERT_NE(file, nullptr) << error;
  EXPECT_THAT(nonFiniteWarnings(*file, "w.safetensors"),
              testing::ElementsAre("w.safetensors: tensor 'w' has 2 non-finite values (the "
                                   "first, at [1, 3], is NaN)"));
}
