//===- Frontend.cpp - Load a .tm spec: read, parse, check -----------------===//

#include "frontend/Frontend.h"

#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace llvm;

namespace tmc {

static LoadedSpec loadBuffer(std::unique_ptr<MemoryBuffer> buffer,
                             raw_ostream &diagnostics) {
  LoadedSpec result;
  result.sourceMgr = std::make_unique<SourceMgr>();
  unsigned id =
      result.sourceMgr->AddNewSourceBuffer(std::move(buffer), SMLoc());
  DiagnosticEngine diags(*result.sourceMgr, diagnostics);

  Parser parser(result.sourceMgr->getMemoryBuffer(id)->getBuffer(), diags);
  result.ast = parser.parseFile();
  if (result.ast)
    result.spec = analyze(*result.ast, diags);

  diags.flush();
  result.errorCount = diags.errorCount();
  result.warningCount = diags.warningCount();
  result.unlocatedCount = diags.unlocatedCount();
  return result;
}

LoadedSpec loadSpec(StringRef path, raw_ostream &diagnostics) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (std::error_code error = buffer.getError()) {
    SMDiagnostic(path, SourceMgr::DK_Error,
                 "cannot read the spec: " + error.message())
        .print(nullptr, diagnostics);
    LoadedSpec result;
    result.sourceMgr = std::make_unique<SourceMgr>();
    result.errorCount = 1;
    return result;
  }
  return loadBuffer(std::move(*buffer), diagnostics);
}

LoadedSpec loadSpecFromString(StringRef source, StringRef bufferName,
                              raw_ostream &diagnostics) {
  return loadBuffer(MemoryBuffer::getMemBufferCopy(source, bufferName),
                    diagnostics);
}

} // namespace tmc
