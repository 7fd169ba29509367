//===- FrontendFuzzer.cpp - libFuzzer target: lexer, parser, Sema ---------===//
//
// Feeds arbitrary bytes through everything `tmc check` and `tmc manifest` do
// with a spec: lexing, parsing with recovery, Sema, diagnostic rendering, the
// AST dump, and for a valid spec the manifest, sizes and FLOP counts. Any
// crash, sanitizer report, timeout or diagnostic without a location is a
// bug; each one found becomes a lit regression test in tests/lit/frontend/.
//
//===----------------------------------------------------------------------===//

#include "frontend/Frontend.h"
#include "frontend/Manifest.h"
#include "frontend/ModelStats.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  tmc::LoadedSpec loaded = tmc::loadSpecFromString(text, "fuzz.tm", llvm::nulls());
  // The contract: every error and warning names file:line:col.
  if (loaded.unlocatedCount != 0)
    __builtin_trap();
  if (loaded.ast)
    tmc::dumpAST(*loaded.ast, *loaded.sourceMgr, llvm::nulls());
  if (!loaded.ok())
    return 0;
  std::vector<tmc::TensorSpec> manifest = tmc::buildManifest(*loaded.spec);
  std::optional<tmc::ModelSizes> sizes = tmc::computeSizes(*loaded.spec);
  // Sema has already rejected any spec whose sizes overflow.
  if (!sizes || manifest.empty())
    __builtin_trap();
  tmc::countFlops(*loaded.spec);
  return 0;
}
