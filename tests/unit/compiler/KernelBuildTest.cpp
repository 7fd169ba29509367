//===- KernelBuildTest.cpp - Every object in a process of its own ---------===//
//
// buildKernels (compiler/halide/KernelCompiler.h) lowers and compiles each
// object in a child process, `jobs` at once. These tests pin what that must
// not change: one child at a time or several, the objects and the stage
// texts are the same bytes, and a second build with the kernel cache reuses
// every object, each found by its job's key without lowering its kernel
// (a job whose schedule changed, or whose object left the cache, is lowered
// again); an object that cannot be written is the one error, named, however
// many others were running beside it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipeline.h"
#include "compiler/Schedule.h"
#include "compiler/halide/KernelCompiler.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <algorithm>
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

  /// Builds into a fresh directory under the test's, with the stmt text.
  llvm::Expected<KernelBuildResult> build(const std::string &name, int jobs) {
    KernelBuildRequest request;
    request.workDir = root + "/" + name;
    llvm::sys::fs::create_directories(request.workDir);
    request.wantStmt = true;
    request.jobs = jobs;
    return buildKernels(model->plan, *model->target, request);
  }
  /// Builds objects alone (what the kernel cache keeps), through `cache`.
  llvm::Expected<KernelBuildResult> buildObjects(const std::string &name,
                                                 const std::string &cache) {
    KernelBuildRequest request;
    request.workDir = root + "/" + name;
    llvm::sys::fs::create_directories(request.workDir);
    request.kernelCache = cache;
    return buildKernels(model->plan, *model->target, request);
  }

  std::string root;
  std::unique_ptr<PlannedModel> model;
};

TEST_F(KernelBuild, OneChildAtATimeOrManySameBytes) {
#ifdef TMC_SANITIZED
  // Two builds without a cache (the stmt text), every object by instrumented
  // children: the same fork and wait paths as the cases below, for a
  // property (the bytes) that is the main build's to check.
  GTEST_SKIP() << "the main build runs this case";
#endif
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
  // Every kernel's object by its job's key, unlowered; the Halide runtime
  // (no kernel to lower) by its own.
  EXPECT_EQ(first->unloweredObjects, 0);
  EXPECT_EQ(second->unloweredObjects, static_cast<int>(second->objects.size()) - 1);
  for (size_t i = 0; i < first->objects.size(); ++i)
    EXPECT_EQ(readBytes(first->objects[i]), readBytes(second->objects[i]));
  EXPECT_EQ(first->halideText, second->halideText);
}

/// How many of `result`'s objects are named `names` (file stems).
int countNamed(const KernelBuildResult &result, const std::vector<std::string> &names) {
  int n = 0;
  for (const std::string &object : result.objects)
    n += std::count(names.begin(), names.end(), llvm::sys::path::stem(object).str());
  return n;
}

/// A first build through a cache, for the job keys' cases. Those run in
/// the main build only: each builds the plan three times, every object by
/// children of the instrumented process under the sanitizers, where
/// TheSecondBuildReusesEveryObject takes the job keys' paths.
class KernelBuildJobKeys : public KernelBuild {
protected:
  void SetUp() override {
#ifdef TMC_SANITIZED
    GTEST_SKIP() << "the main build runs this case";
#endif
    KernelBuild::SetUp();
    cache = root + "/cache";
    llvm::Expected<KernelBuildResult> built = buildObjects("first", cache);
    ASSERT_TRUE(static_cast<bool>(built)) << llvm::toString(built.takeError());
    first = std::move(*built);
  }
  std::string cache;
  KernelBuildResult first;
};

TEST_F(KernelBuildJobKeys, AJobIsFoundUnloweredOnlyWithItsOwnSchedule) {
  // A tuning database changes a kernel's schedule, not its name: the job key
  // holds the schedule, so that kernel's jobs are lowered again, and their
  // objects are those of a build that never saw the old schedule.
  size_t linear = 0;
  while (model->plan.kernels[linear].kind != KernelKind::linear)
    ++linear;
  const KernelDesc &kernel = model->plan.kernels[linear];
  Schedule &schedule = model->plan.schedules[0][linear];
  const Schedule before = schedule;
  schedule.unrollK = schedule.unrollK == 2 ? 1 : 2;
  // Its jobs: the GEMM, the pack kernel, and a decoding step's GEMV where
  // the target has one (GPUs); that one is lowered again only if its own
  // schedule changed.
  const std::string name = "tmk_" + kernel.symbol();
  const std::string decode = decodeKernelSuffix(kernel, schedule);
  const int decodeJobs = decode.empty() ? 0 : countNamed(first, {name + decode});
  const bool decodeChanged =
      decodeKernelSchedule(kernel, before) != decodeKernelSchedule(kernel, schedule);
  const int gemmJobs = countNamed(first, {name});
  const int packJobs = countNamed(first, {"tmk_pack_" + kernel.symbol()});
  ASSERT_EQ(gemmJobs, 1);
  ASSERT_EQ(packJobs, 1);

  llvm::Expected<KernelBuildResult> changed = buildObjects("changed", cache);
  ASSERT_TRUE(static_cast<bool>(changed)) << llvm::toString(changed.takeError());
  // That linear's GEMM and pack kernel's jobs are lowered (the pack kernel
  // reads no unroll: the same object, found by the object's key); every
  // other job, the Halide runtime aside, is found unlowered.
  EXPECT_EQ(changed->unloweredObjects, static_cast<int>(changed->objects.size()) - 1 - gemmJobs -
                                           packJobs - (decodeChanged ? decodeJobs : 0));
  EXPECT_GE(changed->compiledObjects, 1);

  llvm::Expected<KernelBuildResult> fresh = buildObjects("fresh", "");
  ASSERT_TRUE(static_cast<bool>(fresh)) << llvm::toString(fresh.takeError());
  ASSERT_EQ(changed->objects.size(), fresh->objects.size());
  bool differs = false;
  for (size_t i = 0; i < fresh->objects.size(); ++i) {
    EXPECT_EQ(readBytes(changed->objects[i]), readBytes(fresh->objects[i])) << fresh->objects[i];
    differs |= readBytes(first.objects[i]) != readBytes(fresh->objects[i]);
  }
  EXPECT_TRUE(differs) << "the changed schedule compiled to the same objects";
  EXPECT_EQ(changed->halideText, fresh->halideText);
  EXPECT_NE(changed->halideText, first.halideText);
}

TEST_F(KernelBuildJobKeys, AJobWhoseObjectLeftTheCacheIsLoweredAgain) {
  // The objects go (a user clearing space), the job entries stay; one job
  // entry is cut short.
  std::error_code ec;
  int removed = 0, jobEntries = 0;
  for (llvm::sys::fs::recursive_directory_iterator it(cache, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef path = it->path();
    if (path.ends_with(".o"))
      removed += !llvm::sys::fs::remove(path);
    if (path.ends_with(".job") && jobEntries++ == 0)
      std::ofstream(path.str()) << "0123";
  }
  ASSERT_GT(removed, 0);
  llvm::Expected<KernelBuildResult> second = buildObjects("second", cache);
  ASSERT_TRUE(static_cast<bool>(second)) << llvm::toString(second.takeError());
  EXPECT_EQ(second->unloweredObjects, 0);
  EXPECT_EQ(second->cachedObjects, 0);
  EXPECT_EQ(second->compiledObjects, static_cast<int>(second->objects.size()));
  for (size_t i = 0; i < first.objects.size(); ++i)
    EXPECT_EQ(readBytes(first.objects[i]), readBytes(second->objects[i]));
  EXPECT_EQ(first.halideText, second->halideText);
  // Compiled again, every job is found again (the cut entry rewritten).
  llvm::Expected<KernelBuildResult> third = buildObjects("third", cache);
  ASSERT_TRUE(static_cast<bool>(third)) << llvm::toString(third.takeError());
  EXPECT_EQ(third->unloweredObjects, static_cast<int>(third->objects.size()) - 1);
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
