//===- Frontend.h - Load a .tm spec: read, parse, check -----------*- C++
//-*-===//
//
// The one entry point the driver and the tools use. Everything it finds wrong
// is printed, with location, to the given stream; the caller decides the exit
// status from the counts.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/AST.h"
#include "frontend/ModelSpec.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace tmc {

/// One spec file: the source it came from, its syntax tree, and (if it passed
/// the checks) its meaning.
struct LoadedSpec {
  std::unique_ptr<llvm::SourceMgr> sourceMgr;
  std::unique_ptr<ast::Model> ast; // set when the file parsed without errors
  std::optional<ModelSpec> spec; // set when it also passed every semantic check
  unsigned errorCount = 0, warningCount = 0;
  /// Errors and warnings without a file:line:col (always 0 unless tmc has a
  /// bug; see DiagnosticEngine::unlocatedCount).
  unsigned unlocatedCount = 0;
  bool ok() const { return spec.has_value(); }
};

/// The largest spec tmc reads (docs/spec-language.md): a spec is a short
/// text; anything larger is not one, and reading it would cost memory for
/// nothing (`tmc check /dev/zero`).
inline constexpr uint64_t kMaxSpecBytes = uint64_t(1) << 20;

/// `path` read whole (`-`: standard input), refused unless it is a regular
/// file (so a FIFO or a device can neither block nor fill memory) of at most
/// `maxBytes` bytes; `what` ("the spec") names it in the size error.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef path, uint64_t maxBytes, llvm::StringRef what);

/// Reads, parses and checks `path`; every diagnostic is printed to
/// `diagnostics` as `file:line:col: error: message`, the source line, and a
/// caret (llvm::SourceMgr::PrintMessage format).
/// `-` reads standard input. `overrides` are the command line's changes to
/// the spec (--precision).
LoadedSpec loadSpec(llvm::StringRef path, llvm::raw_ostream &diagnostics,
                    const SpecOverrides &overrides = {});
/// Same for a spec held in memory; `bufferName` stands in for the file name in
/// diagnostics.
LoadedSpec loadSpecFromString(llvm::StringRef source,
                              llvm::StringRef bufferName,
                              llvm::raw_ostream &diagnostics,
                              const SpecOverrides &overrides = {});

/// The --emit=ast dump: an indented tree with line:col of each node (stable
/// format, tested with FileCheck).
void dumpAST(const ast::Model &model, const llvm::SourceMgr &sourceMgr,
             llvm::raw_ostream &os);

} // namespace tmc
