//===- Driver.h - The stages of `tmc compile` -------------------*- C++ -*-===//
#pragma once

#include "compiler/Pipeline.h"

#include <optional>
#include <string>

namespace tmc {

/// "ast", "tm", "tm-opt", "kernels", "halide", "stmt", "asm", "obj", "exe", "lib", "device".
std::optional<Stage> parseStage(const std::string &name);
const char *stageNames();

struct CompileOptions {
  std::string input;             ///< MODEL.tm, or a module saved by an IR stage (.mlir)
  std::string spec;              ///< --spec: the spec of a .mlir input (default: its tm.spec)
  std::string output;           ///< `-o`; text stages print to stdout when empty or "-";
                                ///< lib: a directory, or DIR/NAME for DIR/libNAME.a + DIR/NAME.h;
                                ///< device: a directory (created if missing)
  std::string target = "host";
  std::string dumpStagesTo;     ///< directory for every stage's text
  Stage emit = Stage::Exe;
  unsigned optLevel = 2;
  int threads = 0;              ///< default thread count baked into the executable
  int maxBatch = 16;            ///< sequences one run may carry (tmr_model_desc.max_batch)
  int rowBlock = 0;             ///< --row-block (ExecutorOptions::rowBlock)
  bool printIRAfterAll = false;
  bool explain = false;         ///< remarks: fusions made and declined, op -> kernel
  bool trace = false;           ///< executor reports every kernel's output (`tmc verify`)
  std::string tuningDb;         ///< --tuning-db: schedules from `tmc tune`'s database
  std::string kernelCache;      ///< --kernel-cache: a directory of compiled kernel objects
  int jobs = 0;                 ///< --jobs: kernel objects compiled at once (0: one per CPU)
  SpecOverrides overrides;      ///< --precision: changes to a .tm input's spec
};

struct KernelPlan;

/// Runs the pipeline (Pipeline.h), then the back end: Halide, the executor,
/// the link. Diagnostics and errors go to stderr. Returns the process exit code.
/// With `plan`, also hands back the kernel plan the executable runs.
int runCompile(const CompileOptions &options, KernelPlan *plan = nullptr);

} // namespace tmc
