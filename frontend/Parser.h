//===- Parser.h - Recursive-descent parser for .tm specs ----------*- C++
//-*-===//
//
// Builds the syntax tree of docs/spec-language.md without interpreting keys.
// On a syntax error it reports "expected X, found Y", skips to the next
// statement boundary and carries on, so one run lists every syntax error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/AST.h"
#include "frontend/Lexer.h"

#include <memory>

namespace tmc {

class DiagnosticEngine;

class Parser {
public:
  /// `buffer` must belong to the SourceMgr that `diags` prints from.
  Parser(llvm::StringRef buffer, DiagnosticEngine &diags);

  /// Parses the whole buffer. Returns null if any lexical or syntax error was
  /// reported (all of them are reported before returning).
  std::unique_ptr<ast::Model> parseFile();

private:
  enum class Level { Model, Stack, Override };

  void consume() { tok = lexer.next(); }
  void skipNewlines();
  void skipSeparators();
  /// Reports "expected `what`, found <current token>" unless the current token
  /// is one the lexer already reported.
  void errorExpected(const llvm::Twine &what);
  /// Skips the rest of a malformed statement, stopping before a `}` that
  /// closes the enclosing block.
  void recoverStatement();
  void skipBlock();

  /// Parses statements up to the matching `}`; `open` is the `{`.
  void parseBlockBody(Level level, llvm::SMLoc open, llvm::StringRef blockName,
                      std::vector<ast::Assignment> &assignments,
                      ast::Stack *stack, ast::Model *model);
  void parseStatement(Level level, std::vector<ast::Assignment> &assignments,
                      ast::Stack *stack, ast::Model *model);
  bool parseAssignmentRest(Token key,
                           std::vector<ast::Assignment> &assignments);
  bool expectStatementEnd(llvm::StringRef key);
  void parseStack(Token keyword, ast::Model &model);
  void parseOverride(Token keyword, ast::Stack &stack);

  ast::ValuePtr parseValue();
  ast::ValuePtr parseTerm();
  ast::ValuePtr parseCall(Token callee);
  ast::ValuePtr parseList();

  Lexer lexer;
  DiagnosticEngine &diags;
  Token tok;
  /// `(` and `[` the parser consumed and has not yet closed: after an error
  /// inside them, a newline does not end the statement.
  unsigned openBrackets = 0;
  /// How deep parseValue has recursed; bounded so that hostile input such as
  /// `[[[[...` cannot exhaust the stack.
  unsigned valueDepth = 0;
};

} // namespace tmc
