//===- LexerTest.cpp - Tokens, literals and lexical errors ----------------===//

#include "frontend/Lexer.h"
#include "frontend/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

using namespace tmc;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Kind = Token::Kind;

namespace {

/// Lexes `source` to the end; keeps the tokens and the printed diagnostics.
struct Lexed {
  std::vector<Token> tokens;
  std::string diagnostics;
  unsigned errors = 0;
  llvm::SourceMgr sourceMgr;

  explicit Lexed(llvm::StringRef source) {
    unsigned id = sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(source, "lex.tm"), llvm::SMLoc());
    llvm::raw_string_ostream os(diagnostics);
    DiagnosticEngine diags(sourceMgr, os);
    Lexer lexer(sourceMgr.getMemoryBuffer(id)->getBuffer(), &diags);
    while (true) {
      tokens.push_back(lexer.next());
      if (tokens.back().is(Kind::EndOfFile))
        break;
    }
    errors = diags.errorCount();
  }

  std::vector<Kind> kinds() const {
    std::vector<Kind> result;
    for (const Token &token : tokens)
      result.push_back(token.kind);
    return result;
  }
};

TEST(LexerTest, PunctuationAndIdentifiers) {
  Lexed lexed("model m_1 { } ( ) [ ] = , ; + ..");
  EXPECT_EQ(lexed.errors, 0u);
  EXPECT_THAT(lexed.kinds(),
              ElementsAre(Kind::Identifier, Kind::Identifier, Kind::LBrace,
                          Kind::RBrace, Kind::LParen, Kind::RParen,
                          Kind::LBracket, Kind::RBracket, Kind::Equal,
                          Kind::Comma, Kind::Semicolon, Kind::Plus,
                          Kind::DotDot, Kind::EndOfFile));
  EXPECT_EQ(lexed.tokens[1].spelling, "m_1");
}

TEST(LexerTest, IntegersAndFloats) {
  Lexed lexed("768 1e-5 0.5 2E3 1e+2 -3 9223372036854775807");
  ASSERT_EQ(lexed.errors, 0u) << lexed.diagnostics;
  EXPECT_THAT(lexed.kinds(),
              ElementsAre(Kind::Integer, Kind::Float, Kind::Float, Kind::Float,
                          Kind::Float, Kind::Integer, Kind::Integer,
                          Kind::EndOfFile));
  EXPECT_EQ(lexed.tokens[0].intValue, 768);
  EXPECT_DOUBLE_EQ(lexed.tokens[1].floatValue, 1e-5);
  EXPECT_DOUBLE_EQ(lexed.tokens[2].floatValue, 0.5);
  EXPECT_DOUBLE_EQ(lexed.tokens[3].floatValue, 2000);
  EXPECT_DOUBLE_EQ(lexed.tokens[4].floatValue, 100);
  EXPECT_EQ(lexed.tokens[5].intValue, -3);
  EXPECT_EQ(lexed.tokens[6].intValue, INT64_MAX);
}

TEST(LexerTest, RangeIsNotAFloat) {
  Lexed lexed("layers 0..5 {");
  EXPECT_EQ(lexed.errors, 0u);
  EXPECT_THAT(lexed.kinds(),
              ElementsAre(Kind::Identifier, Kind::Integer, Kind::DotDot,
                          Kind::Integer, Kind::LBrace, Kind::EndOfFile));
  EXPECT_EQ(lexed.tokens[1].intValue, 0);
  EXPECT_EQ(lexed.tokens[3].intValue, 5);
}

TEST(LexerTest, CommentsAndNewlines) {
  Lexed lexed("a = 1 # a comment, même en français\r\n# whole line\nb");
  EXPECT_EQ(lexed.errors, 0u) << lexed.diagnostics;
  EXPECT_THAT(lexed.kinds(),
              ElementsAre(Kind::Identifier, Kind::Equal, Kind::Integer,
                          Kind::Newline, Kind::Newline, Kind::Identifier,
                          Kind::EndOfFile));
}

TEST(LexerTest, IntegerOverflowIsAnError) {
  Lexed lexed("x = 9223372036854775808");
  EXPECT_EQ(lexed.errors, 1u);
  EXPECT_EQ(lexed.tokens[2].kind, Kind::Error);
  EXPECT_THAT(
      lexed.diagnostics,
      HasSubstr("lex.tm:1:5: error: integer literal 9223372036854775808 "
                "does not fit in 64 bits"));
}

TEST(LexerTest, FloatOutOfRangeIsAnError) {
  Lexed lexed("1e999 1e-999");
  EXPECT_EQ(lexed.errors, 2u);
  EXPECT_THAT(lexed.diagnostics,
              HasSubstr("1:1: error: float literal 1e999 is out of range"));
  EXPECT_THAT(lexed.diagnostics,
              HasSubstr("1:7: error: float literal 1e-999 is too small"));
}

TEST(LexerTest, StrayCharacterIsLocated) {
  Lexed lexed("vocab = 10\nd_model $= 4");
  EXPECT_EQ(lexed.errors, 1u);
  EXPECT_THAT(lexed.diagnostics,
              HasSubstr("lex.tm:2:9: error: unexpected character '$'"));
  // The caret points at the culprit.
  EXPECT_THAT(lexed.diagnostics, HasSubstr("d_model $= 4\n        ^"));
  EXPECT_THAT(lexed.kinds(),
              ElementsAre(Kind::Identifier, Kind::Equal, Kind::Integer,
                          Kind::Newline, Kind::Identifier, Kind::Error,
                          Kind::Equal, Kind::Integer, Kind::EndOfFile));
}

TEST(LexerTest, ColonGetsAHint) {
  Lexed lexed("vocab: 10");
  EXPECT_THAT(lexed.diagnostics, HasSubstr("error: unexpected character ':'"));
  EXPECT_THAT(lexed.diagnostics, HasSubstr("note: keys are set with '='"));
}

TEST(LexerTest, InvalidUTF8IsAnError) {
  Lexed lexed("a = \xff\xfe 1");
  EXPECT_EQ(lexed.errors, 1u); // one message for the run of bad bytes
  EXPECT_THAT(lexed.diagnostics,
              HasSubstr("lex.tm:1:5: error: invalid UTF-8 byte 0xFF"));
}

TEST(LexerTest, InvalidUTF8InCommentIsAnError) {
  Lexed lexed("# caf\xe9\nx");
  EXPECT_EQ(lexed.errors, 1u);
  EXPECT_THAT(lexed.diagnostics,
              HasSubstr("1:6: error: invalid UTF-8 byte 0xE9 in comment"));
}

TEST(LexerTest, NonASCIIOutsideCommentsIsAnError) {
  Lexed lexed("d_modèl = 4");
  EXPECT_EQ(lexed.errors, 1u);
  EXPECT_THAT(lexed.diagnostics, HasSubstr("unexpected character 'è'"));
}

TEST(LexerTest, LetterInsideNumberIsAnError) {
  Lexed lexed("heads = 12x");
  EXPECT_EQ(lexed.errors, 1u);
  EXPECT_THAT(lexed.diagnostics,
              HasSubstr("1:11: error: invalid character 'x' in number '12x'"));
}

TEST(LexerTest, ByteOrderMarkIsSkipped) {
  Lexed lexed("\xEF\xBB\xBFmodel");
  EXPECT_EQ(lexed.errors, 0u);
  EXPECT_THAT(lexed.kinds(), ElementsAre(Kind::Identifier, Kind::EndOfFile));
}

TEST(LexerTest, EmbeddedNulIsAnError) {
  Lexed lexed(llvm::StringRef("a\0b", 3));
  EXPECT_EQ(lexed.errors, 1u);
  EXPECT_THAT(lexed.diagnostics, HasSubstr("unexpected control character 0x0"));
}

TEST(LexerTest, DescribesTokensForMessages) {
  Lexed lexed("foo 12 }\n");
  EXPECT_EQ(lexed.tokens[0].describe(), "identifier 'foo'");
  EXPECT_EQ(lexed.tokens[1].describe(), "integer 12");
  EXPECT_EQ(lexed.tokens[2].describe(), "'}'");
  EXPECT_EQ(lexed.tokens[3].describe(), "newline");
  EXPECT_EQ(lexed.tokens[4].describe(), "end of file");
}

} // namespace
