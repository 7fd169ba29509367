//===- Token.h - Tokens of the .tm spec language ------------------*- C++
//-*-===//
//
// Keywords (`model`, `encoder`, `layers`, `true`, ...) are lexed as plain
// identifiers: several of them are also key names (`layers = 12`), so only
// the parser, which knows the context, can tell them apart.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <string>

namespace tmc {

struct Token {
  enum class Kind {
    Identifier,
    Integer,
    Float,
    DotDot,   // ..
    LBrace,   // {
    RBrace,   // }
    LParen,   // (
    RParen,   // )
    LBracket, // [
    RBracket, // ]
    Equal,    // =
    Comma,    // ,
    Semicolon,
    Plus,
    Newline,
    EndOfFile,
    /// A malformed token; the lexer has already reported it.
    Error,
  };

  Kind kind = Kind::EndOfFile;
  /// The token's characters in the source buffer (empty at end of file).
  llvm::StringRef spelling;
  int64_t intValue = 0;
  double floatValue = 0;

  bool is(Kind k) const { return kind == k; }
  bool isIdentifier(llvm::StringRef name) const {
    return kind == Kind::Identifier && spelling == name;
  }
  llvm::SMLoc loc() const {
    return llvm::SMLoc::getFromPointer(spelling.data());
  }

  /// How the token reads in "expected X, found Y" messages, e.g. "'}'",
  /// "identifier 'foo'", "newline".
  std::string describe() const;
};

/// "'{'", "an identifier", ...: how a kind reads in "expected X" messages.
const char *describe(Token::Kind kind);

} // namespace tmc
