//===- Error.h - The one error type of compiler/ ----------------*- C++ -*-===//
//
// Every fallible function in compiler/ returns llvm::Error (nothing to hand
// back) or llvm::Expected<T>, never a bool with a `std::string *error`
// out-parameter. An error is a message that says what went wrong and with
// what ("-o out.o: the directory 'x' does not exist"); it carries no prefix.
// Errors travel up unchanged (or with context prepended by `withContext`)
// and are rendered once, by reportError, as "tmc: error: MESSAGE". A usage
// error (a flag's value out of range, two roles given one file) renders the
// same way but makes the command exit with 2 instead of 1.
//
// Errors in the spec or the IR are not these: they are MLIR diagnostics with
// the spec location, printed by the frontend's and MLIR's handlers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace tmc {

/// An error a user fixes by changing how tmc is called: exit status 2.
class UsageError : public llvm::ErrorInfo<UsageError> {
public:
  static char ID;
  explicit UsageError(std::string message) : message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;
  const std::string &text() const { return message; }

private:
  std::string message;
};

/// A failure already reported as diagnostics (errors in the spec or the IR,
/// printed with their locations by MLIR's or the frontend's handler): exit
/// status 1, nothing more printed.
class DiagnosedError : public llvm::ErrorInfo<DiagnosedError> {
public:
  static char ID;
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;
};

/// A failure whose diagnostics have been printed already.
llvm::Error makeDiagnosedError();

/// A failure (exit status 1) with `message`.
llvm::Error makeError(const llvm::Twine &message);

/// A usage error (exit status 2) with `message`.
llvm::Error makeUsageError(const llvm::Twine &message);

/// `error` with "CONTEXT: " before its message (a usage error stays one);
/// success stays success.
llvm::Error withContext(llvm::Error error, const llvm::Twine &context);

/// Prints every message in `error` as "tmc: error: MESSAGE" on stderr (none
/// for a DiagnosedError) and returns the exit status it calls for: 2 if any
/// is a usage error, else 1; 0 for success.
int reportError(llvm::Error error);

/// Prints "tmc: warning: MESSAGE" on stderr.
void reportWarning(const llvm::Twine &message);

/// The lines reportError and reportWarning print, for output that goes
/// through something else (the tuner's progress display).
std::string errorLine(const llvm::Twine &message);
std::string warningLine(const llvm::Twine &message);

} // namespace tmc
