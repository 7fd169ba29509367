//===- Toolchain.h - The system C++ compiler and linker ---------*- C++ -*-===//
//
// tmc compiles the generated executor and links the executable with the
// system's C++ compiler (`c++`, or $CXX), against the runtime archives built
// beside tmc; for a cross target (TargetInfo::crossTriple), with that
// triple's g++, statically, against the runtime archives CMake built for it
// (lib/<triple>/). The `target` arguments default to the host. Every output
// file is written to a temporary name in the target directory and renamed
// into place, so a failed compile leaves nothing behind.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/Target.h"
#include "runtime/input_files.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tmc {

/// Compiles one C++ source file to an object, with the runtime's and
/// Halide's headers on the include path and `flags` (-I, -D) added.
llvm::Error compileCxx(const std::string &source, const std::string &object,
                       const TargetInfo *target = nullptr,
                       const std::vector<std::string> &flags = {});

/// compileCxx for each (source, object), up to `jobs` compilers at once (a
/// multi-ISA executable's executors are independent). The error is the first
/// failed source's, in order; every compiler started is waited for.
llvm::Error compileCxxAll(const std::vector<std::pair<std::string, std::string>> &sourcesAndObjects,
                          const TargetInfo *target, int jobs);

/// Links objects with the runtime (tmr_main, tmr_runtime) into an executable
/// at `output`, atomically.
llvm::Error linkExecutable(const std::vector<std::string> &objects, const std::string &output,
                           const TargetInfo *target = nullptr);

/// Combines objects into one relocatable object at `output` (`--emit=obj`), atomically.
llvm::Error linkRelocatable(const std::vector<std::string> &objects, const std::string &output,
                            const TargetInfo *target = nullptr);

/// Archives objects together with every object of the runtime (tmr_runtime,
/// not tmr_main: the embedding program has its own main) into one static
/// library at `output` (`--emit=lib`), atomically. `workDir` holds scratch.
llvm::Error archiveLibrary(const std::vector<std::string> &objects, const std::string &output,
                           const std::string &workDir, const TargetInfo *target = nullptr);

/// The text of the runtime's C API header (runtime/tmr.h), for `--emit=lib`.
llvm::Expected<std::string> readRuntimeHeader();

/// Writes `contents` to `path` through a temporary file and a rename.
llvm::Error writeFileAtomically(const std::string &path, const std::string &contents);

/// A usage error when `output` (the value of `outputRole`, e.g. "-o") is the
/// same file as one of `inputs` (runtime/input_files.h). Every command calls
/// it for each file it writes before doing any work. An input that was not
/// given (an empty path) or does not exist is none.
llvm::Error checkNotAnInput(const std::string &outputRole, const std::string &output,
                            const std::vector<tmr::InputFile> &inputs);

} // namespace tmc
