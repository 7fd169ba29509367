//===- Driver.h - The stages of `tmc compile` -------------------*- C++ -*-===//
#pragma once

#include <optional>
#include <string>

namespace tmc {

/// The stages in pipeline order; `--emit=STAGE` stops after one. Lib is the
/// alternative to Exe: libNAME.a + NAME.h for embedding (runtime/tmr.h).
/// Device (GPU targets) writes each kernel's PTX into a directory.
enum class Stage { AST, TM, TMOpt, Kernels, Halide, Stmt, Asm, Obj, Exe, Lib, Device };

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
  bool printIRAfterAll = false;
  bool explain = false;         ///< remarks: fusions made and declined, op -> kernel
  bool trace = false;           ///< executor reports every kernel's output (`tmc verify`)
  std::string tuningDb;         ///< --tuning-db: schedules from `tmc tune`'s database
};

struct KernelPlan;

/// Runs the pipeline; diagnostics go to stderr. Returns the process exit code.
/// With `plan`, also hands back the kernel plan the executable runs.
int runCompile(const CompileOptions &options, KernelPlan *plan = nullptr);

} // namespace tmc
