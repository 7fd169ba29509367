//===- NpyTest.cpp - writeNpyF32 / readNpyF32 ------------------------------===//
//
// Headers below are spelled exactly as numpy.save writes them, so the reader
// is tested against the real format, not just against our own writer.
//
//===----------------------------------------------------------------------===//
#include "runtime/npy.h"
#include "tests/unit/runtime/TempDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

using namespace tmr;
using namespace tmr::test;
using testing::ElementsAre;
using testing::HasSubstr;

namespace {

/// An .npy file: magic, version, little-endian header length, header, data.
std::string npyBytes(int major, const std::string &header, const std::vector<float> &values) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  size_t lengthBytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < lengthBytes; ++i)
    out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  std::string data(values.size() * 4, '\0');
  std::memcpy(data.data(), values.data(), data.size());
  return out + data;
}

/// A numpy-style header dict padded to `alignment` bytes including the prefix.
std::string paddedHeader(const std::string &dict, size_t prefix, size_t alignment = 64) {
  std::string header = dict;
  while ((prefix + header.size() + 1) % alignment != 0)
    header += ' ';
  return header + "\n";
}

TEST(NpyTest, RoundTrip) {
  TempDir dir;
  std::string path = dir.file("out.npy");
  std::vector<float> values = {0.5f, -1, 2, 3e8f, -4e-9f, 5, 6, 7, 8, 9, 10, 11};
  ASSERT_TRUE(writeNpyF32(path, {1, 3, 4}, values.data(), nullptr));
  std::string bytes = readBytes(path);
  ASSERT_GE(bytes.size(), 10u);
  size_t headerSize = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9])
                                                                 << 8;
  EXPECT_EQ((10 + headerSize) % 64, 0u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_THAT(bytes.substr(10, headerSize),
              HasSubstr("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 4), }"));
  EXPECT_EQ(bytes[10 + headerSize - 1], '\n');

  std::vector<int64_t> shape;
  std::vector<float> data;
  std::string error;
  ASSERT_TRUE(readNpyF32(path, &shape, &data, &error)) << error;
  EXPECT_THAT(shape, ElementsAre(1, 3, 4));
  EXPECT_EQ(data, values);
  EXPECT_THAT(dir.list(), ElementsAre("out.npy"));
}

TEST(NpyTest, OneDimensionalAndScalarShapes) {
  TempDir dir;
  std::vector<float> values = {1, 2, 3};
  std::vector<int64_t> shape;
  std::vector<float> data;
  ASSERT_TRUE(writeNpyF32(dir.file("v.npy"), {3}, values.data(), nullptr));
  EXPECT_THAT(readBytes(dir.file("v.npy")), HasSubstr("'shape': (3,), }"));
  ASSERT_TRUE(readNpyF32(dir.file("v.npy"), &shape, &data, nullptr));
  EXPECT_THAT(shape, ElementsAre(3));
  EXPECT_EQ(data, values);
  ASSERT_TRUE(writeNpyF32(dir.file("s.npy"), {}, values.data(), nullptr));
  ASSERT_TRUE(readNpyF32(dir.file("s.npy"), &shape, &data, nullptr));
  EXPECT_TRUE(shape.empty());
  EXPECT_THAT(data, ElementsAre(1.0f));
}

TEST(NpyTest, ReadsNumpyVersion1And2Files) {
  TempDir dir;
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }";
  writeBytes(dir.file("v1.npy"), npyBytes(1, paddedHeader(dict, 10), {1, 2, 3, 4}));
  writeBytes(dir.file("v2.npy"), npyBytes(2, paddedHeader(dict, 12), {5, 6, 7, 8}));
  // Older numpy padded to 16 bytes and used double quotes in some writers.
  writeBytes(
      dir.file("old.npy"),
      npyBytes(1,
               paddedHeader(R"({"descr": "<f4", "fortran_order": False, "shape": (1,)})", 10, 16),
               {9}));
  std::vector<int64_t> shape;
  std::vector<float> data;
  std::string error;
  ASSERT_TRUE(readNpyF32(dir.file("v1.npy"), &shape, &data, &error)) << error;
  EXPECT_THAT(shape, ElementsAre(2, 2));
  EXPECT_THAT(data, ElementsAre(1, 2, 3, 4));
  ASSERT_TRUE(readNpyF32(dir.file("v2.npy"), &shape, &data, &error)) << error;
  EXPECT_THAT(data, ElementsAre(5, 6, 7, 8));
  ASSERT_TRUE(readNpyF32(dir.file("old.npy"), &shape, &data, &error)) << error;
  EXPECT_THAT(shape, ElementsAre(1));
  EXPECT_THAT(data, ElementsAre(9));
}

std::string readError(const std::string &path, const std::string &bytes) {
  writeBytes(path, bytes);
  std::vector<int64_t> shape;
  std::vector<float> data;
  std::string error;
  EXPECT_FALSE(readNpyF32(path, &shape, &data, &error));
  EXPECT_THAT(error, HasSubstr(path + ": "));
  return error;
}

TEST(NpyTest, RejectsBadFiles) {
  TempDir dir;
  std::string p = dir.file("bad.npy");
  std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  EXPECT_THAT(
      readError(p, std::string("\x93NUMPZ\x01\x00", 8) + npyBytes(1, good, {1, 2}).substr(8)),
      HasSubstr("not a .npy file (bad magic)"));
  EXPECT_THAT(readError(p, "PK\x03\x04"), HasSubstr("bad magic"));
  EXPECT_THAT(readError(p, npyBytes(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                                    {1, 2})),
              HasSubstr("big-endian float32 ('>f4') is not supported"));
  EXPECT_THAT(
      readError(p, npyBytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", {1, 2})),
      HasSubstr("Fortran-order arrays are not supported"));
  EXPECT_THAT(readError(p, npyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                                    {1, 2})),
              HasSubstr("dtype '<f8' is not supported; expected float32 '<f4'"));
  std::string v3 = npyBytes(2, good, {1, 2});
  v3[6] = 3;
  EXPECT_THAT(readError(p, v3), HasSubstr("unsupported .npy format version 3.0"));
  EXPECT_THAT(readError(p, npyBytes(1, good, {1})),
              HasSubstr("data section has 4 bytes, but the shape needs 8"));
  EXPECT_THAT(readError(p, npyBytes(1, "{'descr': '<f4', 'shape': (2,), }", {1, 2})),
              HasSubstr("header has no 'fortran_order'"));
  EXPECT_THAT(readError(p, npyBytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,-1)}",
                                    {1, 2})),
              HasSubstr("malformed header"));
  EXPECT_THAT(readError(p, npyBytes(1, good, {1, 2}).substr(0, 20)),
              HasSubstr("truncated in its header"));
}

TEST(NpyTest, WriteFailuresLeaveNothing) {
  TempDir dir;
  float one = 1;
  std::string error;
  EXPECT_FALSE(writeNpyF32(dir.file("missing/out.npy"), {1}, &one, &error));
  EXPECT_THAT(error, HasSubstr("No such file or directory"));
  EXPECT_FALSE(writeNpyF32(dir.file("out.npy"), {-1}, &one, &error));
  EXPECT_THAT(error, HasSubstr("negative dimension -1"));
  EXPECT_TRUE(dir.list().empty());
}

} // namespace
