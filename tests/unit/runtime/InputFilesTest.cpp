//===- InputFilesTest.cpp - No output written over an input ---------------===//
//
// isSameFile compares files, not spellings: symlinks and hard links to an
// input are the input, a path that does not exist yet never is, and a device
// (written in place) is never overwritten.
//
//===----------------------------------------------------------------------===//
#include "runtime/input_files.h"

#include "TempDir.h"

#include <gtest/gtest.h>

#include <unistd.h>

namespace tmr {
namespace {

TEST(InputFiles, SameFileThroughAnySpelling) {
  test::TempDir dir;
  std::string input = dir.file("w.safetensors");
  test::writeBytes(input, "weights");
  ASSERT_EQ(::symlink("w.safetensors", dir.file("link").c_str()), 0);
  ASSERT_EQ(::link(input.c_str(), dir.file("hard").c_str()), 0);
  test::writeBytes(dir.file("other"), "weights");
  EXPECT_TRUE(isSameFile(input, input));
  EXPECT_TRUE(isSameFile(dir.file("link"), input));
  EXPECT_TRUE(isSameFile(dir.file("hard"), input));
  EXPECT_TRUE(isSameFile(dir.path() + "/./w.safetensors", input));
  EXPECT_FALSE(isSameFile(dir.file("other"), input));   // equal contents, another file
  EXPECT_FALSE(isSameFile(dir.file("absent"), input));  // not written yet: no input
  EXPECT_FALSE(isSameFile(dir.file("absent"), dir.file("absent")));
  EXPECT_FALSE(isSameFile("", input));
  EXPECT_FALSE(isSameFile("/dev/null", "/dev/null"));   // written in place
}

TEST(InputFiles, TheMessageNamesBothRoles) {
  test::TempDir dir;
  std::string spec = dir.file("M.tm");
  test::writeBytes(spec, "model m {}");
  std::vector<InputFile> inputs = {{"the tuning database", dir.file("db.jsonl")},
                                   {"the spec", spec}};
  EXPECT_EQ(overwrittenInput("-o", spec, inputs),
            "-o " + spec + " is the spec (" + spec + "): refusing to write over an input");
  EXPECT_EQ(overwrittenInput("-o", dir.file("out"), inputs), "");
}

/// A Hugging Face checkpoint is a folder: the files it is read from are
/// inputs, an earlier run's output beside them is not.
TEST(InputFiles, AFolderInputGuardsTheFilesItIsReadFrom) {
  test::TempDir dir;
  test::writeBytes(dir.file("model-00001-of-00002.safetensors"), "weights");
  test::writeBytes(dir.file("config.json"), "{}");
  test::writeBytes(dir.file("out.npy"), "an earlier output");
  std::vector<InputFile> inputs = {{"the weights", dir.path()}};
  std::string shard = dir.file("model-00001-of-00002.safetensors");
  EXPECT_EQ(overwrittenInput("--output", shard, inputs), "--output " + shard +
                                                             " is a file of the weights (" + shard +
                                                             "): refusing to write over an input");
  EXPECT_NE(overwrittenInput("--output", dir.file("config.json"), inputs), "");
  EXPECT_EQ(overwrittenInput("--output", dir.file("out.npy"), inputs), "");
  EXPECT_EQ(overwrittenInput("--output", dir.file("new.safetensors"), inputs), "");
}

} // namespace
} // namespace tmr
