//===- Lexer.cpp - Splits a .tm buffer into tokens ------------------------===//

#include "frontend/Lexer.h"

#include "frontend/Diagnostics.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/Format.h"

#include <cmath>
#include <string>

using namespace llvm;

namespace tmc {

const char *describe(Token::Kind kind) {
  switch (kind) {
  case Token::Kind::Identifier:
    return "an identifier";
  case Token::Kind::Integer:
    return "an integer";
  case Token::Kind::Float:
    return "a float";
  case Token::Kind::DotDot:
    return "'..'";
  case Token::Kind::LBrace:
    return "'{'";
  case Token::Kind::RBrace:
    return "'}'";
  case Token::Kind::LParen:
    return "'('";
  case Token::Kind::RParen:
    return "')'";
  case Token::Kind::LBracket:
    return "'['";
  case Token::Kind::RBracket:
    return "']'";
  case Token::Kind::Equal:
    return "'='";
  case Token::Kind::Comma:
    return "','";
  case Token::Kind::Semicolon:
    return "';'";
  case Token::Kind::Plus:
    return "'+'";
  case Token::Kind::Newline:
    return "newline";
  case Token::Kind::EndOfFile:
    return "end of file";
  case Token::Kind::Error:
    return "an invalid token";
  }
  return "a token";
}

std::string Token::describe() const {
  switch (kind) {
  case Kind::Identifier:
    return ("identifier '" + spelling + "'").str();
  case Kind::Integer:
    return ("integer " + spelling).str();
  case Kind::Float:
    return ("float " + spelling).str();
  default:
    return tmc::describe(kind);
  }
}

Lexer::Lexer(StringRef buffer, DiagnosticEngine *diags)
    : cur(buffer.begin()), end(buffer.end()), diags(diags) {
  // A UTF-8 byte order mark carries no meaning; editors on some systems add it.
  if (buffer.starts_with("\xEF\xBB\xBF"))
    cur += 3;
}

void Lexer::error(const char *at, const Twine &message, const Twine &hint) {
  if (diags)
    diags->error(SMLoc::getFromPointer(at), message, hint);
}

Token Lexer::make(Token::Kind kind, const char *start) {
  Token token;
  token.kind = kind;
  token.spelling = StringRef(start, cur - start);
  return token;
}

static bool isIdentStart(char c) { return isAlpha(c) || c == '_'; }
static bool isIdentChar(char c) { return isAlnum(c) || c == '_'; }

/// The characters a token can start with; anything else is stray.
static bool startsToken(char c) {
  return isIdentStart(c) || isDigit(c) ||
         StringRef("{}()[]=,;+.#-").contains(c) || c == ' ' || c == '\t' ||
         c == '\r' || c == '\n';
}

Token Lexer::next() {
  while (cur < end) {
    const char *start = cur;
    char c = *cur;
    switch (c) {
    case ' ':
    case '\t':
    case '\r':
    case '\f':
    case '\v':
      ++cur;
      continue;
    case '#':
      skipComment();
      continue;
    case '\n':
      ++cur;
      return make(Token::Kind::Newline, start);
    case '{':
      ++cur;
      return make(Token::Kind::LBrace, start);
    case '}':
      ++cur;
      return make(Token::Kind::RBrace, start);
    case '(':
      ++cur;
      return make(Token::Kind::LParen, start);
    case ')':
      ++cur;
      return make(Token::Kind::RParen, start);
    case '[':
      ++cur;
      return make(Token::Kind::LBracket, start);
    case ']':
      ++cur;
      return make(Token::Kind::RBracket, start);
    case '=':
      ++cur;
      return make(Token::Kind::Equal, start);
    case ',':
      ++cur;
      return make(Token::Kind::Comma, start);
    case ';':
      ++cur;
      return make(Token::Kind::Semicolon, start);
    case '+':
      ++cur;
      return make(Token::Kind::Plus, start);
    case '.':
      if (cur + 1 < end && cur[1] == '.') {
        cur += 2;
        return make(Token::Kind::DotDot, start);
      }
      return lexStray(start);
    case '-':
      // Negative literals are not in the grammar, but lexing them lets the
      // checker say "must be > 0, found -2" instead of a syntax error.
      if (cur + 1 < end && isDigit(cur[1]))
        return lexNumber(start);
      return lexStray(start);
    default:
      if (c == '\0' && cur + 1 == end)
        break; // MemoryBuffer's terminator when `end` includes it.
      if (isIdentStart(c))
        return lexIdentifier(start);
      if (isDigit(c))
        return lexNumber(start);
      return lexStray(start);
    }
    break;
  }
  cur = end;
  return make(Token::Kind::EndOfFile, end);
}

Token Lexer::lexIdentifier(const char *start) {
  while (cur < end && isIdentChar(*cur))
    ++cur;
  return make(Token::Kind::Identifier, start);
}

Token Lexer::lexNumber(const char *start) {
  if (*cur == '-')
    ++cur;
  bool isFloat = false;
  while (cur < end && isDigit(*cur))
    ++cur;
  // `0..5` is a range, so a '.' makes a float only when a digit follows.
  if (cur + 1 < end && *cur == '.' && isDigit(cur[1])) {
    isFloat = true;
    ++cur;
    while (cur < end && isDigit(*cur))
      ++cur;
  }
  if (cur < end && (*cur == 'e' || *cur == 'E')) {
    const char *p = cur + 1;
    if (p < end && (*p == '+' || *p == '-'))
      ++p;
    if (p < end && isDigit(*p)) {
      isFloat = true;
      cur = p;
      while (cur < end && isDigit(*cur))
        ++cur;
    }
  }
  if (cur < end &&
      (isIdentChar(*cur) || (*cur == '.' && cur + 1 < end && cur[1] != '.'))) {
    const char *bad = cur;
    while (cur < end && (isIdentChar(*cur) || *cur == '.'))
      ++cur;
    error(bad, "invalid character '" + Twine(*bad) + "' in number '" +
                   StringRef(start, cur - start) + "'");
    return make(Token::Kind::Error, start);
  }

  Token token =
      make(isFloat ? Token::Kind::Float : Token::Kind::Integer, start);
  if (!isFloat) {
    if (token.spelling.getAsInteger(10, token.intValue)) {
      error(start, "integer literal " + token.spelling +
                       " does not fit in 64 bits (the largest is " +
                       Twine(INT64_MAX) + ")");
      token.kind = Token::Kind::Error;
    }
    return token;
  }
  if (token.spelling.getAsDouble(token.floatValue) ||
      !std::isfinite(token.floatValue)) {
    error(start, "float literal " + token.spelling +
                     " is out of range for a 64-bit float");
    token.kind = Token::Kind::Error;
    return token;
  }
  // getAsDouble accepts underflow as an inexact result: 1e-999 would
  // silently become 0.
  StringRef mantissa =
      token.spelling.take_until([](char c) { return c == 'e' || c == 'E'; });
  if (token.floatValue == 0 &&
      mantissa.find_first_of("123456789") != StringRef::npos) {
    error(start, "float literal " + token.spelling +
                     " is too small for a 64-bit float (it would be 0)");
    token.kind = Token::Kind::Error;
  }
  return token;
}

/// Length of the UTF-8 sequence at `p`, or 0 if it is not valid UTF-8.
static unsigned validUTF8Length(const char *p, const char *end) {
  auto *u = reinterpret_cast<const UTF8 *>(p);
  unsigned length = getNumBytesForUTF8(*u);
  if (length == 0 || p + length > end || !isLegalUTF8Sequence(u, u + length))
    return 0;
  return length;
}

Token Lexer::lexStray(const char *start) {
  unsigned char c = *cur;
  if (c >= 0x80) {
    unsigned length = validUTF8Length(cur, end);
    if (length == 0) {
      error(cur, "invalid UTF-8 byte 0x" +
                     Twine(utohexstr(c, /*LowerCase=*/false)) +
                     " (spec files must be UTF-8)");
      ++cur;
    } else {
      error(cur, "unexpected character '" + StringRef(cur, length) +
                     "' (only comments may contain non-ASCII text)");
      cur += length;
    }
  } else if (c == ':') {
    error(cur, "unexpected character ':'",
          "keys are set with '=': key = value");
    ++cur;
  } else if (c == '.') {
    error(cur, "unexpected character '.'",
          "numbers start with a digit (0.5, not .5); ranges are written A..B");
    ++cur;
  } else if (isPrint(c)) {
    error(cur, "unexpected character '" + Twine(char(c)) + "'");
    ++cur;
  } else {
    error(cur, "unexpected control character 0x" +
                   Twine(utohexstr(c, /*LowerCase=*/false)));
    ++cur;
  }
  // One message for a run of junk (say, a binary file) is enough.
  while (cur < end && !startsToken(*cur))
    ++cur;
  return make(Token::Kind::Error, start);
}

void Lexer::skipComment() {
  bool reported =
      false; // once per comment: a binary blob would flood otherwise
  while (cur < end && *cur != '\n') {
    if (static_cast<unsigned char>(*cur) < 0x80) {
      ++cur;
      continue;
    }
    unsigned length = validUTF8Length(cur, end);
    if (length == 0 && !reported) {
      reported = true;
      error(cur, "invalid UTF-8 byte 0x" +
                     Twine(utohexstr(static_cast<unsigned char>(*cur), false)) +
                     " in comment (spec files must be UTF-8)");
    }
    cur += length ? length : 1;
  }
}

} // namespace tmc
