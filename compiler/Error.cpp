//===- Error.cpp - The one error type of compiler/ ------------------------===//

#include "compiler/Error.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

namespace tmc {

char UsageError::ID = 0;
char DiagnosedError::ID = 0;

void DiagnosedError::log(llvm::raw_ostream &os) const { os << "(reported as diagnostics)"; }

std::error_code DiagnosedError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

llvm::Error makeDiagnosedError() { return llvm::make_error<DiagnosedError>(); }

void UsageError::log(llvm::raw_ostream &os) const { os << message; }

std::error_code UsageError::convertToErrorCode() const { return llvm::inconvertibleErrorCode(); }

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Error makeUsageError(const llvm::Twine &message) {
  return llvm::make_error<UsageError>(message.str());
}

llvm::Error withContext(llvm::Error error, const llvm::Twine &context) {
  if (!error)
    return error;
  std::string prefix = context.str() + ": ";
  bool usage = false;
  std::string joined;
  bool diagnosed = false;
  llvm::handleAllErrors(std::move(error), [&](const llvm::ErrorInfoBase &info) {
    usage |= info.isA<UsageError>();
    if (info.isA<DiagnosedError>())
      diagnosed = true; // its diagnostics said where and what already
    else
      joined += (joined.empty() ? "" : "\n") + prefix + info.message();
  });
  if (joined.empty())
    return diagnosed ? makeDiagnosedError() : llvm::Error::success();
  return usage ? makeUsageError(joined) : makeError(joined);
}

int reportError(llvm::Error error) {
  int status = 0;
  llvm::handleAllErrors(std::move(error), [&](const llvm::ErrorInfoBase &info) {
    status = std::max(status, info.isA<UsageError>() ? 2 : 1);
    if (!info.isA<DiagnosedError>())
      llvm::errs() << errorLine(info.message()) << "\n";
  });
  return status;
}

std::string errorLine(const llvm::Twine &message) { return ("tmc: error: " + message).str(); }

std::string warningLine(const llvm::Twine &message) {
  return ("tmc: warning: " + message).str();
}

void reportWarning(const llvm::Twine &message) { llvm::errs() << warningLine(message) << "\n"; }

} // namespace tmc
