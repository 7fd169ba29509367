//===- ObjectCacheTest.cpp - Kernel objects reused only when alike --------===//
//
// The kernel cache's key (compiler/halide/ObjectCache.h) must tell apart any
// two modules Halide would compile differently, down to a float constant's
// last bit, a constant table's byte and the target, and must not depend on
// the names Halide numbered before (the same pipeline lowered later in a
// process prints other numbers). The directory round trip: a stored object
// comes back byte for byte, a missing entry misses, an unwritable directory
// only warns.
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/ObjectCache.h"

#include "Halide.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

using namespace tmc::halide;

namespace {

const Halide::Target kTarget("x86-64-linux-avx2-no_runtime");

/// out(x) = in(x) * scale + table(x % 4), as tmc's kernels take their inputs.
Halide::Module scaleModule(float scale, const std::vector<float> &table,
                           const Halide::Target &target = kTarget) {
  Halide::ImageParam in(Halide::Float(32), 1, "in");
  Halide::Buffer<float> constants(static_cast<int>(table.size()), "constants");
  for (size_t i = 0; i < table.size(); ++i)
    constants(static_cast<int>(i)) = table[i];
  Halide::Var x("x");
  Halide::Func out("out");
  out(x) = in(x)*scale + constants(x % static_cast<int>(table.size()));
  out.vectorize(x, 8, Halide::TailStrategy::GuardWithIf);
  return out.compile_to_module({in}, "tmk_scale", target);
}

/// Lowers the pipeline once so that every later one numbers its names:
/// keys then differ only by what a test changes.
void useNamesOnce() { scaleModule(1.0f, {0}); }

std::string readBytes(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

std::string tempDir(const std::string &name) {
  llvm::SmallString<128> dir;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory(name, dir));
  return dir.str().str();
}

TEST(ObjectCacheKey, NamesHalideNumberedAloneDoNotChangeTheKey) {
  const std::vector<float> table = {1, 2, 3, 4};
  // A name's first Func keeps it ("out"); later ones are numbered ("out$4"),
  // which changes the object's metadata and messages: a different key.
  std::string firstUse = objectKey(scaleModule(0.125f, table));
  std::string first = objectKey(scaleModule(0.125f, table));
  EXPECT_NE(firstUse, first);
  // Lowering other pipelines advances Halide's counters: the same pipeline
  // then prints other numbers (t123, out$7), the same names otherwise.
  for (int i = 0; i < 3; ++i)
    scaleModule(0.5f + static_cast<float>(i), {5, 6});
  std::string again = objectKey(scaleModule(0.125f, table));
  EXPECT_EQ(first, again);
  EXPECT_EQ(first.size(), 64u);
}

TEST(ObjectCacheKey, AFloatConstantsLastBitChangesTheKey) {
  useNamesOnce();
  const std::vector<float> table = {1, 2, 3, 4};
  float scale = 0.1234567f;
  float next = std::nextafter(scale, 1.0f);
  // Six significant digits (a stream's default) print both alike.
  std::ostringstream six;
  six << scale << " " << next;
  ASSERT_EQ(six.str(), "0.123457 0.123457");
  EXPECT_NE(objectKey(scaleModule(scale, table)), objectKey(scaleModule(next, table)));
}

TEST(ObjectCacheKey, AConstantTablesByteChangesTheKey) {
  useNamesOnce();
  std::vector<float> table = {1, 2, 3, 4};
  std::string key = objectKey(scaleModule(0.125f, table));
  table[3] = std::nextafter(4.0f, 5.0f);
  EXPECT_NE(key, objectKey(scaleModule(0.125f, table)));
}

TEST(ObjectCacheKey, TheTargetChangesTheKey) {
  useNamesOnce();
  const std::vector<float> table = {1, 2, 3, 4};
  Halide::Target avx512("x86-64-linux-avx2-avx512-avx512_skylake-no_runtime");
  EXPECT_NE(objectKey(scaleModule(0.125f, table)), objectKey(scaleModule(0.125f, table, avx512)));
  EXPECT_NE(runtimeKey(kTarget), runtimeKey(avx512));
  EXPECT_EQ(runtimeKey(kTarget), runtimeKey(Halide::Target(kTarget.to_string())));
}

TEST(ObjectCache, StoredObjectsComeBackByteForByte) {
  std::string dir = tempDir("tmc-object-cache");
  ObjectCache cache(dir + "/cache");
  Halide::Module module = scaleModule(0.125f, {1, 2, 3, 4});
  std::string key = objectKey(module);
  std::string object = dir + "/tmk_scale.o";
  std::string copy = dir + "/copy.o";
  EXPECT_FALSE(cache.fetch(key, copy)) << "an empty cache has no entry";
  module.compile({{Halide::OutputFileType::object, object}});
  cache.store(key, object);
  ASSERT_TRUE(cache.fetch(key, copy));
  EXPECT_EQ(readBytes(copy), readBytes(object));
  EXPECT_FALSE(readBytes(copy).empty());
  EXPECT_FALSE(cache.fetch(runtimeKey(kTarget), dir + "/other.o"));
  llvm::sys::fs::remove_directories(dir);
}

TEST(ObjectCache, AnUnwritableDirectoryOnlyWarns) {
  std::string dir = tempDir("tmc-object-cache");
  std::string file = dir + "/not-a-directory";
  std::ofstream(file) << "x";
  std::ofstream(dir + "/tmk.o") << "an object";
  ObjectCache cache(file + "/cache"); // under a file: nothing can be created
  testing::internal::CaptureStderr();
  cache.store(runtimeKey(kTarget), dir + "/tmk.o");
  std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_NE(warning.find("tmc: warning: kernel cache '" + file + "/cache': cannot create"),
            std::string::npos)
      << warning;
  EXPECT_FALSE(cache.fetch(runtimeKey(kTarget), dir + "/back.o"));
  EXPECT_FALSE(ObjectCache("").enabled());
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
