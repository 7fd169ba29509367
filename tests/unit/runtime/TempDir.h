//===- TempDir.h - Scratch directories and raw files for runtime tests -*- C++ -*-===//
//
// The runtime tests build their own (often deliberately broken) files byte by
// byte, so they need a private directory that is removed afterwards.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace tmr::test {

/// A fresh directory under the test temp dir, removed with its contents.
class TempDir {
public:
  TempDir() {
    std::string pattern = (std::filesystem::path(testing::TempDir()) / "tmr-test-XXXXXX").string();
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!mkdtemp(buffer.data()))
      ADD_FAILURE() << "mkdtemp failed for " << pattern;
    path_ = buffer.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  /// `name` inside the directory.
  std::string file(const std::string &name) const { return path_ + "/" + name; }
  const std::string &path() const { return path_; }
  /// Names of everything in the directory, to spot leftover temp files.
  std::vector<std::string> list() const {
    std::vector<std::string> names;
    for (const auto &entry : std::filesystem::directory_iterator(path_))
      names.push_back(entry.path().filename().string());
    return names;
  }

private:
  std::string path_;
};

inline void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

inline std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// The 8-byte little-endian length prefix of a safetensors file.
inline std::string lengthPrefix(uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

/// A safetensors file with `header` as its JSON and `data` after it.
inline std::string safetensorsBytes(const std::string &header, const std::string &data) {
  return lengthPrefix(header.size()) + header + data;
}

} // namespace tmr::test
