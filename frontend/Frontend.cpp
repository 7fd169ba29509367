//===- Frontend.cpp - Load a .tm spec: read, parse, check -----------------===//

#include "frontend/Frontend.h"

#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "frontend/Sema.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace tmc {

static LoadedSpec loadBuffer(std::unique_ptr<MemoryBuffer> buffer,
                             raw_ostream &diagnostics, const SpecOverrides &overrides) {
  LoadedSpec result;
  result.sourceMgr = std::make_unique<SourceMgr>();
  unsigned id =
      result.sourceMgr->AddNewSourceBuffer(std::move(buffer), SMLoc());
  DiagnosticEngine diags(*result.sourceMgr, diagnostics);

  Parser parser(result.sourceMgr->getMemoryBuffer(id)->getBuffer(), diags);
  result.ast = parser.parseFile();
  if (result.ast)
    result.spec = analyze(*result.ast, diags, overrides);

  diags.flush();
  result.errorCount = diags.errorCount();
  result.warningCount = diags.warningCount();
  result.unlocatedCount = diags.unlocatedCount();
  // A flag has no place in the spec to point at: said against the file, as
  // the spec's own `kv_cache` key is warned about at its line (Sema.cpp).
  if (result.spec && overrides.kvCache && !result.spec->decoder.present) {
    SMDiagnostic(result.sourceMgr->getMemoryBuffer(id)->getBufferIdentifier(),
                 SourceMgr::DK_Warning,
                 "--kv-cache has no effect without a decoder: an encoder keeps no key/value "
                 "cache")
        .print(nullptr, diagnostics);
    ++result.warningCount;
  }
  return result;
}

Expected<std::unique_ptr<MemoryBuffer>> readInputFile(StringRef path, uint64_t maxBytes,
                                                       StringRef what) {
  auto failure = [](std::error_code code, const Twine &message) -> Error {
    return createStringError(code, "%s", message.str().c_str());
  };
  auto tooLarge = [&] {
    return failure(std::make_error_code(std::errc::file_too_large),
                   what + " is larger than " + Twine(maxBytes >> 20) + " MiB, the limit for it");
  };
  if (path == "-") {
    // Standard input has no size to check first: read at most one byte
    // past the limit.
    std::string text;
    char chunk[1 << 16];
    while (text.size() <= maxBytes) {
      ssize_t n = ::read(0, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return failure(std::error_code(errno, std::generic_category()),
                       "cannot read standard input");
      if (n == 0)
        return MemoryBuffer::getMemBufferCopy(text, "<stdin>");
      text.append(chunk, static_cast<size_t>(n));
    }
    return tooLarge();
  }
  // Opened without blocking and checked before reading: a FIFO would block
  // forever, a device (/dev/zero) never end.
  int fd = ::open(path.str().c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return failure(std::error_code(errno, std::generic_category()), std::strerror(errno));
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    return failure(std::make_error_code(std::errc::invalid_argument),
                   S_ISDIR(status.st_mode) ? "is a directory" : "not a regular file");
  }
  if (static_cast<uint64_t>(status.st_size) > maxBytes) {
    ::close(fd);
    return tooLarge();
  }
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer = MemoryBuffer::getOpenFile(
      sys::fs::convertFDToNativeFile(fd), path, status.st_size, /*RequiresNullTerminator=*/true);
  ::close(fd);
  if (std::error_code error = buffer.getError())
    return failure(error, error.message());
  return std::move(*buffer);
}

LoadedSpec loadSpec(StringRef path, raw_ostream &diagnostics,
                    const SpecOverrides &overrides) {
  Expected<std::unique_ptr<MemoryBuffer>> buffer =
      readInputFile(path, kMaxSpecBytes, "the spec");
  if (!buffer) {
    SMDiagnostic(path, SourceMgr::DK_Error,
                 "cannot read the spec: " + toString(buffer.takeError()))
        .print(nullptr, diagnostics);
    LoadedSpec result;
    result.sourceMgr = std::make_unique<SourceMgr>();
    result.errorCount = 1;
    return result;
  }
  return loadBuffer(std::move(*buffer), diagnostics, overrides);
}

LoadedSpec loadSpecFromString(StringRef source, StringRef bufferName,
                              raw_ostream &diagnostics, const SpecOverrides &overrides) {
  return loadBuffer(MemoryBuffer::getMemBufferCopy(source, bufferName),
                    diagnostics, overrides);
}

} // namespace tmc
