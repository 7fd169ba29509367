//===- IRFuzzer.cpp - libFuzzer target: a saved IR stage, edited ----------===//
//
// Feeds arbitrary bytes, as a `.mlir` file, through what `tmc compile
// MODEL.mlir` does before Halide: runPipeline parses the module, verifies
// every op, checks its weights against the manifest of the spec its tm.spec
// attribute names, runs the tm and tmk passes and forms the kernel plan. The
// seeds are the tm, tm-opt and kernels stages of examples/ (written at build
// time, with and without locations), so mutations are edited stages. Any
// crash, sanitizer report or timeout is a bug: an edited module must be
// rejected by a verifier (docs/architecture.md, "Resuming from IR"), never
// reach a pass or the plan in a state they cannot handle.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipeline.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

/// runPipeline reads its input from a path, as the driver gives it: one name
/// per fuzzing process, written for each input and removed after it (libFuzzer
/// may end the process without running exit handlers).
const std::string &inputPath() {
  static const std::string path = [] {
    llvm::SmallString<128> file;
    llvm::sys::fs::createUniquePath("tmc-ir-fuzz-%%%%%%%%.mlir", file, /*MakeAbsolute=*/true);
    return std::string(file);
  }();
  return path;
}

} // namespace

// MLIR's storage allocators are BumpPtrAllocators shared by libMLIR.so,
// built without ASan, and the code compiled here, whose inline copy of the
// allocator poisons each new slab and unpoisons only what it hands out: an
// attribute libMLIR then allocates in that slab reads as "use-after-poison".
// Manual poisoning is off; ASan still checks every heap allocation.
extern "C" const char *__asan_default_options() { return "allow_user_poisoning=0"; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  {
    std::error_code error;
    llvm::raw_fd_ostream out(inputPath(), error);
    if (error)
      std::abort();
    out.write(reinterpret_cast<const char *>(data), size);
  }
  tmc::PipelineOptions options;
  options.input = inputPath();
  // No target: the pipeline stops at the plan, before schedules and Halide.
  // Quiet: diagnostics are dropped and the context runs one thread.
  options.quiet = true;
  llvm::Expected<std::unique_ptr<tmc::PlannedModel>> model = tmc::runPipeline(options);
  llvm::sys::fs::remove(inputPath());
  if (!model) {
    llvm::consumeError(model.takeError());
    return 0;
  }
  // A module that passed every verifier has a plan that computes the output.
  if (!(*model)->complete || (*model)->plan.calls.empty())
    __builtin_trap();
  return 0;
}
