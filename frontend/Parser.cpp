//===- Parser.cpp - Recursive-descent parser for .tm specs ----------------===//
//
// Grammar (docs/spec-language.md), with call arguments that may be positional
// so that `post(layernorm(eps = 1e-5))` parses:
//
//   file     := 'model' IDENT '{' item* '}'
//   item     := IDENT '=' value | stack
//   stack    := ('encoder' | 'decoder') '{' (IDENT '=' value | override)* '}'
//   override := 'layers' INT '..' INT '{' (IDENT '=' value)* '}'
//   value    := term ('+' term)*
//   term     := INT | FLOAT | 'true' | 'false' | IDENT
//             | IDENT '(' [arg (',' arg)*] ')' | '[' [value (',' value)*] ']'
//   arg      := [IDENT '='] value
//
// Statements end at a newline, a ';' or the `}` of their block. Inside
// parentheses, brackets and after '+', newlines are insignificant.
//
//===----------------------------------------------------------------------===//

#include "frontend/Parser.h"

#include "frontend/Diagnostics.h"

using namespace llvm;

namespace tmc {

using Kind = Token::Kind;

Parser::Parser(StringRef buffer, DiagnosticEngine &diags)
    : lexer(buffer, &diags), diags(diags) {
  consume();
}

void Parser::skipNewlines() {
  while (tok.is(Kind::Newline))
    consume();
}

void Parser::skipSeparators() {
  while (tok.is(Kind::Newline) || tok.is(Kind::Semicolon))
    consume();
}

void Parser::errorExpected(const Twine &what) {
  if (tok.is(Kind::Error))
    return; // the lexer has said what is wrong with it
  diags.error(tok.loc(), "expected " + what + ", found " + tok.describe());
}

void Parser::recoverStatement() {
  // Only brackets the parser opened keep a newline from ending the statement:
  // a stray `(` (as in `max_seq = (`) must not swallow the rest of the file.
  unsigned nesting = openBrackets;
  openBrackets = 0;
  while (true) {
    switch (tok.kind) {
    case Kind::EndOfFile:
      return;
    case Kind::RBrace:
      return; // closes the enclosing block: its loop takes it
    case Kind::Newline:
    case Kind::Semicolon:
      if (nesting == 0) {
        consume();
        return;
      }
      break;
    case Kind::LParen:
    case Kind::LBracket:
      if (nesting > 0)
        ++nesting;
      break;
    case Kind::RParen:
    case Kind::RBracket:
      if (nesting > 0)
        --nesting;
      break;
    case Kind::LBrace:
      skipBlock();
      continue;
    default:
      break;
    }
    consume();
  }
}

void Parser::skipBlock() {
  // At a `{`: skip to just past its matching `}` (or to the end of file).
  unsigned depth = 0;
  do {
    if (tok.is(Kind::LBrace))
      ++depth;
    else if (tok.is(Kind::RBrace))
      --depth;
    consume();
  } while (depth > 0 && !tok.is(Kind::EndOfFile));
}

std::unique_ptr<ast::Model> Parser::parseFile() {
  unsigned errorsBefore = diags.errorCount();
  auto model = std::make_unique<ast::Model>();
  skipSeparators();
  model->loc = tok.loc();
  if (tok.isIdentifier("model")) {
    consume();
  } else if (tok.is(Kind::EndOfFile)) {
    diags.error(tok.loc(), "the file holds no model: it is empty or only comments",
                "a spec is one block: model NAME { vocab = ...; d_model = ...; "
                "max_seq = ...; encoder { layers = ...; heads = ... } }");
    return nullptr;
  } else {
    errorExpected("'model' at the start of the file");
    // A misspelt keyword (`modle x {`) should not hide the rest of the file.
    if (!tok.is(Kind::Identifier))
      return nullptr;
    consume();
  }
  if (tok.is(Kind::Identifier)) {
    model->name = tok.spelling.str();
    consume();
  } else {
    errorExpected("a model name after 'model'");
  }
  skipNewlines();
  if (!tok.is(Kind::LBrace)) {
    errorExpected("'{' to open the model");
    return nullptr;
  }
  SMLoc open = tok.loc();
  consume();
  parseBlockBody(Level::Model, open, "model", model->assignments, nullptr,
                 model.get());

  skipSeparators();
  if (tok.isIdentifier("model"))
    diags.error(tok.loc(), "a file holds exactly one model; found a second "
                           "'model' after the first one's closing '}'");
  else if (!tok.is(Kind::EndOfFile))
    errorExpected("end of file after the model's closing '}'");

  if (diags.errorCount() != errorsBefore)
    return nullptr;
  return model;
}

void Parser::parseBlockBody(Level level, SMLoc open, StringRef blockName,
                            std::vector<ast::Assignment> &assignments,
                            ast::Stack *stack, ast::Model *model) {
  while (true) {
    skipSeparators();
    if (tok.is(Kind::RBrace)) {
      consume();
      return;
    }
    if (tok.is(Kind::EndOfFile)) {
      errorExpected(("'}' to close the " + blockName + " block").str());
      diags.note(open, "the " + blockName + " block opens here");
      return;
    }
    parseStatement(level, assignments, stack, model);
  }
}

void Parser::parseStatement(Level level,
                            std::vector<ast::Assignment> &assignments,
                            ast::Stack *stack, ast::Model *model) {
  if (!tok.is(Kind::Identifier)) {
    errorExpected(level == Level::Stack ? "a key or 'layers A..B { }'"
                                        : "a key");
    recoverStatement();
    return;
  }
  openBrackets = 0;
  Token name = tok;
  consume();
  bool isStackKeyword =
      name.spelling == "encoder" || name.spelling == "decoder";
  if (level == Level::Model && isStackKeyword) {
    skipNewlines(); // `encoder` and `{` on separate lines is still a stack
    if (tok.is(Kind::LBrace)) {
      parseStack(name, *model);
      return;
    }
  }
  if (tok.is(Kind::Equal)) {
    consume();
    if (!parseAssignmentRest(name, assignments))
      recoverStatement();
    return;
  }
  if (level == Level::Stack && name.spelling == "layers" &&
      tok.is(Kind::Integer)) {
    parseOverride(name, *stack);
    return;
  }
  if (tok.is(Kind::LBrace)) {
    if (isStackKeyword)
      diags.error(name.loc(), "'" + name.spelling +
                                  "' blocks belong at model level, not inside "
                                  "another block");
    else if (level == Level::Override)
      diags.error(name.loc(),
                  "blocks cannot be nested inside 'layers A..B { }'");
    else if (StringRef guess =
                 closestMatch(name.spelling, {"encoder", "decoder"});
             level == Level::Model && !guess.empty())
      diags.errorWithFix(name.loc(), "unknown block '" + name.spelling + "'",
                         guess, "did you mean '" + guess + "'?");
    else
      diags.error(name.loc(), "unknown block '" + name.spelling + "'",
                  level == Level::Model
                      ? "a model holds 'encoder { }' and 'decoder { }' blocks"
                      : "a stack holds 'layers A..B { }' blocks");
    skipBlock();
    return;
  }
  if (name.spelling == "layers" && level == Level::Stack)
    errorExpected("'=' or a layer range (layers A..B { }) after 'layers'");
  else
    errorExpected(("'=' after '" + name.spelling + "'").str());
  recoverStatement();
}

bool Parser::parseAssignmentRest(Token key,
                                 std::vector<ast::Assignment> &assignments) {
  // Caught here rather than in parseTerm to name the key in the message.
  if (tok.is(Kind::Newline) || tok.is(Kind::Semicolon) ||
      tok.is(Kind::RBrace) || tok.is(Kind::EndOfFile)) {
    errorExpected(("a value for '" + key.spelling + "'").str());
    return false;
  }
  ast::ValuePtr value = parseValue();
  if (!value)
    return false;
  assignments.push_back({key.spelling.str(), key.loc(), std::move(value)});
  return expectStatementEnd(key.spelling);
}

bool Parser::expectStatementEnd(StringRef key) {
  if (tok.is(Kind::Newline) || tok.is(Kind::Semicolon)) {
    consume();
    return true;
  }
  if (tok.is(Kind::RBrace) || tok.is(Kind::EndOfFile))
    return true;
  errorExpected(("a newline or ';' after the value of '" + key + "'").str());
  return false;
}

void Parser::parseStack(Token keyword, ast::Model &model) {
  ast::Stack stack;
  stack.kind = keyword.spelling.str();
  stack.loc = keyword.loc();
  SMLoc open = tok.loc();
  consume(); // {
  parseBlockBody(Level::Stack, open, stack.kind, stack.assignments, &stack,
                 nullptr);
  model.stacks.push_back(std::move(stack));
}

void Parser::parseOverride(Token keyword, ast::Stack &stack) {
  ast::LayerOverride override;
  override.loc = keyword.loc();
  override.rangeLoc = tok.loc();
  override.first = tok.intValue;
  consume();
  if (!tok.is(Kind::DotDot)) {
    errorExpected("'..' in the layer range (layers A..B { })");
    recoverStatement();
    return;
  }
  consume();
  if (!tok.is(Kind::Integer)) {
    errorExpected("the last layer of the range (layers A..B { })");
    recoverStatement();
    return;
  }
  override.last = tok.intValue;
  consume();
  skipNewlines();
  if (!tok.is(Kind::LBrace)) {
    errorExpected("'{' after the layer range");
    recoverStatement();
    return;
  }
  SMLoc open = tok.loc();
  consume();
  parseBlockBody(Level::Override, open, "layers", override.assignments, nullptr,
                 nullptr);
  stack.overrides.push_back(std::move(override));
}

namespace {
/// Restores a depth counter on every way out of a recursive call.
struct DepthGuard {
  unsigned &depth;
  explicit DepthGuard(unsigned &depth) : depth(depth) { ++depth; }
  ~DepthGuard() { --depth; }
};
} // namespace

/// Far beyond any real spec (a mask sum nests three levels).
static constexpr unsigned kMaxValueDepth = 64;

ast::ValuePtr Parser::parseValue() {
  DepthGuard guard(valueDepth);
  if (valueDepth > kMaxValueDepth) {
    diags.error(tok.loc(), "value nested more than " + Twine(kMaxValueDepth) +
                               " levels deep");
    return nullptr;
  }
  ast::ValuePtr first = parseTerm();
  if (!first || !tok.is(Kind::Plus))
    return first;
  auto sum = std::make_unique<ast::Value>(ast::Value::Kind::Sum, first->loc);
  sum->elements.push_back(std::move(first));
  while (tok.is(Kind::Plus)) {
    consume();
    skipNewlines();
    ast::ValuePtr term = parseTerm();
    if (!term)
      return nullptr;
    sum->elements.push_back(std::move(term));
  }
  return sum;
}

ast::ValuePtr Parser::parseTerm() {
  using VK = ast::Value::Kind;
  Token t = tok;
  switch (t.kind) {
  case Kind::Integer: {
    consume();
    auto value = std::make_unique<ast::Value>(VK::Int, t.loc());
    value->intValue = t.intValue;
    return value;
  }
  case Kind::Float: {
    consume();
    auto value = std::make_unique<ast::Value>(VK::Float, t.loc());
    value->floatValue = t.floatValue;
    return value;
  }
  case Kind::Identifier: {
    consume();
    if (t.spelling == "true" || t.spelling == "false") {
      auto value = std::make_unique<ast::Value>(VK::Bool, t.loc());
      value->boolValue = t.spelling == "true";
      return value;
    }
    if (tok.is(Kind::LParen))
      return parseCall(t);
    auto value = std::make_unique<ast::Value>(VK::Name, t.loc());
    value->name = t.spelling.str();
    return value;
  }
  case Kind::LBracket:
    return parseList();
  default:
    errorExpected("a value (a number, true/false, a name, a call or a list)");
    return nullptr;
  }
}

ast::ValuePtr Parser::parseCall(Token callee) {
  auto call =
      std::make_unique<ast::Value>(ast::Value::Kind::Call, callee.loc());
  call->name = callee.spelling.str();
  consume(); // (
  ++openBrackets;
  skipNewlines();
  while (!tok.is(Kind::RParen)) {
    SMLoc argLoc = tok.loc();
    ast::ValuePtr value = parseValue();
    if (!value)
      return nullptr;
    ast::Argument arg;
    arg.loc = argLoc;
    // `name = value` is told apart from a positional value only by the '='
    // after it, so parse a value first and reinterpret a bare name.
    if (tok.is(Kind::Equal) && value->kind == ast::Value::Kind::Name) {
      consume();
      skipNewlines();
      arg.name = value->name;
      value = parseValue();
      if (!value)
        return nullptr;
    }
    arg.value = std::move(value);
    call->args.push_back(std::move(arg));
    skipNewlines();
    if (tok.is(Kind::Comma)) {
      consume();
      skipNewlines();
      continue;
    }
    if (!tok.is(Kind::RParen)) {
      errorExpected("',' or ')' in the arguments of '" + call->name + "'");
      return nullptr;
    }
  }
  consume(); // )
  --openBrackets;
  return call;
}

ast::ValuePtr Parser::parseList() {
  auto list = std::make_unique<ast::Value>(ast::Value::Kind::List, tok.loc());
  consume(); // [
  ++openBrackets;
  skipNewlines();
  while (!tok.is(Kind::RBracket)) {
    ast::ValuePtr element = parseValue();
    if (!element)
      return nullptr;
    list->elements.push_back(std::move(element));
    skipNewlines();
    if (tok.is(Kind::Comma)) {
      consume();
      skipNewlines();
      continue;
    }
    if (!tok.is(Kind::RBracket)) {
      errorExpected("',' or ']' in the list");
      return nullptr;
    }
  }
  consume(); // ]
  --openBrackets;
  return list;
}

} // namespace tmc
