//===- KernelBuildTest.cpp - Every object in a process of its own ---------===//
//
// buildKernels (compiler/halide/KernelCompiler.h) lowers and compiles each
// object in a child process, `jobs` at once. These tests pin what that must
// not change: one child at a time or several, the objects and the stage
// texts are the same bytes, and a second build with the kernel cache reuses
// every object; an object that cannot be written is the one error, named,
// however many others were running beside it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipeline.h"
#include "compiler/halide/KernelCompiler.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace tmc;

namespace {

constexpr const char *kDecoder = R"(model build_decoder {
  vocab = 64
  d_model = 32
  max_seq = 16
  position = learned
  output = lm_head(tied = false)
  decoder {
    layers = 1
    heads = 2
    d_ff = 64
    ffn = gelu
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
    mask = causal
  }
}
)";

std::string readBytes(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

class KernelBuild : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("tmc-kernel-build", dir));
    root = dir.str().str();
    std::string spec = root + "/decoder.tm";
    std::ofstream(spec) << kDecoder;
    PipelineOptions options;
    options.input = spec;
    options.target = "x86-64-avx2";
    llvm::Expected<std::unique_ptr<PlannedModel>> planned = runPipeline(options);
    ASSERT_TRUE(static_cast<bool>(planned)) << llvm::toString(planned.takeError());
    model = std::move(*planned);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }

  /// Builds into a fresh directory under the test's.
  llvm::Expected<KernelBuildResult> build(const std::string &name, int jobs,
                                          const std::string &cache = "") {
    KernelBuildRequest request;
    request.workDir = root + "/" + name;
    llvm::sys::fs::create_directories(request.workDir);
    request.wantStmt = true;
    request.jobs = jobs;
    request.kernelCache = cache;
    return buildKernels(model->plan, *model->target, request);
  }

  std::string root;
  std::unique_ptr<PlannedModel> model;
};

TEST_F(KernelBuild, OneChildAtATimeOrManySameBytes) {
  llvm::Expected<KernelBuildResult> one = build("one", 1);
  ASSERT_TRUE(static_cast<bool>(one)) << llvm::toString(one.takeError());
  llvm::Expected<KernelBuildResult> many = build("many", 3);
  ASSERT_TRUE(static_cast<bool>(many)) << llvm::toString(many.takeError());
  ASSERT_EQ(one->objects.size(), many->objects.size());
  // Every kernel, its decoding and packing variants, and the runtime.
  EXPECT_GT(one->objects.size(), model->plan.kernels.size());
  EXPECT_EQ(one->halideText, many->halideText);
  EXPECT_EQ(one->stmtText, many->stmtText);
  EXPECT_EQ(one->halideText.rfind("// target: x86-64-linux-", 0), 0u)
      << one->halideText.substr(0, 80);
  for (size_t i = 0; i < one->objects.size(); ++i) {
    std::string bytes = readBytes(one->objects[i]);
    EXPECT_FALSE(bytes.empty()) << one->objects[i];
    EXPECT_EQ(bytes, readBytes(many->objects[i])) << one->objects[i];
  }
  EXPECT_EQ(one->cachedObjects, 0);
  EXPECT_EQ(one->compiledObjects, static_cast<int>(one->objects.size()));
}

TEST_F(KernelBuild, TheSecondBuildReusesEveryObject) {
  std::string cache = root + "/cache";
  // Stmt text asks Halide for more than an object: no cache.
  KernelBuildRequest request;
  request.workDir = root + "/first";
  llvm::sys::fs::create_directories(request.workDir);
  request.kernelCache = cache;
  llvm::Expected<KernelBuildResult> first = buildKernels(model->plan, *model->target, request);
  ASSERT_TRUE(static_cast<bool>(first)) << llvm::toString(first.takeError());
  EXPECT_EQ(first->cachedObjects, 0);
  request.workDir = root + "/second";
  llvm::sys::fs::create_directories(request.workDir);
  request.jobs = 1;
  llvm::Expected<KernelBuildResult> second = buildKernels(model->plan, *model->target, request);
  ASSERT_TRUE(static_cast<bool>(second)) << llvm::toString(second.takeError());
  EXPECT_EQ(second->cachedObjects, static_cast<int>(second->objects.size()));
  EXPECT_EQ(second->compiledObjects, 0);
  for (size_t i = 0; i < first->objects.size(); ++i)
    EXPECT_EQ(readBytes(first->objects[i]), readBytes(second->objects[i]));
  EXPECT_EQ(first->halideText, second->halideText);
}

TEST_F(KernelBuild, AnObjectThatCannotBeWrittenIsTheOneError) {
  // The last kernel's object path is taken by a directory that cannot be
  // removed: Halide's write fails in that kernel's child, the others may
  // still be running, and the error names that object once.
  std::string name = "tmk_" + model->plan.kernels.back().symbol();
  std::vector<std::string> messages;
  for (int jobs : {1, 4}) {
    std::string dir = root + "/blocked" + std::to_string(jobs);
    llvm::sys::fs::create_directories(dir + "/" + name + ".o");
    std::ofstream(dir + "/" + name + ".o/keep") << "x";
    llvm::Expected<KernelBuildResult> result = build("blocked" + std::to_string(jobs), jobs);
    ASSERT_FALSE(static_cast<bool>(result));
    std::string message = llvm::toString(result.takeError());
    EXPECT_NE(message.find("Halide failed to compile kernel " + name + ": "), std::string::npos)
        << message;
    EXPECT_NE(message.find(name + ".o: Is a directory"), std::string::npos) << message;
    messages.push_back(message.substr(0, message.find(dir)));
  }
  // The same error, whichever children ran beside the one that failed.
  EXPECT_EQ(messages[0], messages[1]);
}

} // namespace
