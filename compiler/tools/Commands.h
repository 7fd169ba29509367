//===- Commands.h - The subcommands of tmc and their shared helpers -*- C++ -*-===//
#pragma once

#include "frontend/Frontend.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <initializer_list>
#include <optional>
#include <string>

namespace tmc::tools {

/// The category every command's options belong to; --help shows only it.
extern llvm::cl::OptionCategory toolOptions;

/// libLLVM.so registers options of its own in the same registry (--threads
/// among them); a command takes over the names it defines, so it calls this
/// before declaring its cl::opts.
void releaseGlobalOptions(std::initializer_list<llvm::StringRef> names);

/// Exit statuses of tmc: 1 for a bad spec or a failed command, 2 for a bad
/// command line (unknown flag or command, a missing required argument, a value
/// outside its allowed set), as getopt and argparse programs do.
constexpr int kExitUsage = 2;

/// Parses a command's options; false (the problem printed) on a malformed
/// line, which the command must end on with kExitUsage.
[[nodiscard]] bool parseOptions(int argc, char **argv, const char *overview);

/// Loads a spec for a command, with the command line's `overrides` applied;
/// prints diagnostics and returns nullopt on error.
std::optional<LoadedSpec> load(const std::string &path, const SpecOverrides &overrides = {});

/// The values --precision and --reference-precision accept, as their
/// usage errors list them: "f32, bf16, int8, q4".
std::string allowedPrecisions();

/// The --precision and --kv-cache options of the commands that build a model's kernels
/// (compile, check, verify, tune), each of which declares one with this.
struct PrecisionOption {
  llvm::cl::opt<std::string> value{
      "precision",
      llvm::cl::desc("Precision of the linear layers' GEMMs, f32, bf16, int8 or q4, in place of "
                     "the spec's model-level `precision` (a stack's or layer's own key still "
                     "wins)"),
      llvm::cl::value_desc("P"), llvm::cl::cat(toolOptions)};
  llvm::cl::opt<std::string> kvCache{
      "kv-cache",
      llvm::cl::desc("Storage of a decoder's key/value caches, f32, f16 or bf16, in place of "
                     "the spec's model-level `kv_cache` (a stack's or layer's own key still "
                     "wins)"),
      llvm::cl::value_desc("P"), llvm::cl::cat(toolOptions)};

  /// The spec overrides it asks for (none when neither flag was given), or a
  /// usage error naming the value and the allowed ones.
  llvm::Expected<SpecOverrides> overrides() const;
};

/// `--kernel-cache DIR`, shared by the commands that compile kernels: a
/// directory of compiled kernel objects reused by content (halide/ObjectCache.h).
struct KernelCacheOption {
  llvm::cl::opt<std::string> value{
      "kernel-cache",
      llvm::cl::desc("Reuse compiled kernel objects from DIR, keyed by the SHA-256 of what "
                     "Halide compiles, and keep new ones there (default: $TMC_KERNEL_CACHE; "
                     "unset or empty: no cache)"),
      llvm::cl::value_desc("DIR"), llvm::cl::cat(toolOptions)};

  /// The flag's directory, else $TMC_KERNEL_CACHE's, else "" (none).
  std::string directory() const;
};

int checkCommand(int argc, char **argv);
int importCommand(int argc, char **argv);
int manifestCommand(int argc, char **argv);
int quantizeCommand(int argc, char **argv);
int verifyCommand(int argc, char **argv);
int tuneCommand(int argc, char **argv);

} // namespace tmc::tools
