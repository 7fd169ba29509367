//===- Lexer.h - Splits a .tm buffer into tokens ------------------*- C++
//-*-===//
//
// Newlines are tokens because they end statements; the parser skips them where
// they carry no meaning. Malformed input (a stray character, invalid UTF-8, an
// integer that does not fit in 64 bits) is reported at its location and comes
// back as an Error token, so the parser can resynchronise without repeating it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Token.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

namespace tmc {

class DiagnosticEngine;

class Lexer {
public:
  /// Lexes `buffer`, which must end with a NUL (as MemoryBuffer guarantees) or
  /// at the end of the string. With no `diags`, errors are not printed (used
  /// to re-lex a single token for underlining).
  Lexer(llvm::StringRef buffer, DiagnosticEngine *diags);

  /// The next token; EndOfFile forever once the buffer is exhausted.
  Token next();

private:
  Token make(Token::Kind kind, const char *start);
  Token lexIdentifier(const char *start);
  Token lexNumber(const char *start);
  Token lexStray(const char *start);
  void skipComment();
  void error(const char *at, const llvm::Twine &message,
             const llvm::Twine &hint = llvm::Twine());

  const char *cur;
  const char *end;
  DiagnosticEngine *diags;
};

} // namespace tmc
