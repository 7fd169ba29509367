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

#include <string>
#include <vector>

namespace tmc {

/// Compiles one C++ source file to an object.
bool compileCxx(const std::string &source, const std::string &object, std::string *error,
                const TargetInfo *target = nullptr);

/// Links objects with the runtime (tmr_main, tmr_runtime) into an executable
/// at `output`, atomically.
bool linkExecutable(const std::vector<std::string> &objects, const std::string &output,
                    std::string *error, const TargetInfo *target = nullptr);

/// Combines objects into one relocatable object at `output` (`--emit=obj`), atomically.
bool linkRelocatable(const std::vector<std::string> &objects, const std::string &output,
                     std::string *error, const TargetInfo *target = nullptr);

/// Archives objects together with every object of the runtime (tmr_runtime,
/// not tmr_main: the embedding program has its own main) into one static
/// library at `output` (`--emit=lib`), atomically. `workDir` holds scratch.
bool archiveLibrary(const std::vector<std::string> &objects, const std::string &output,
                    const std::string &workDir, std::string *error,
                    const TargetInfo *target = nullptr);

/// The text of the runtime's C API header (runtime/tmr.h), for `--emit=lib`.
bool readRuntimeHeader(std::string *text, std::string *error);

/// Writes `contents` to `path` through a temporary file and a rename.
bool writeFileAtomically(const std::string &path, const std::string &contents,
                         std::string *error);

} // namespace tmc
