//===- TokenizerWordPieceTest.cpp - BERT WordPiece and Tokenizer::open ----===//
//
// Expected ids refer to examples/tokenizers/wordpiece-tiny/vocab.txt (line
// number - 1); each case states the BERT rule it exercises.
//
//===----------------------------------------------------------------------===//
#include "runtime/tokenizer.h"
#include "tests/unit/runtime/TempDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace tmr;
using namespace tmr::test;
using testing::HasSubstr;
using Ids = std::vector<int32_t>;

namespace {

const std::string kTokenizers = TOKENIZER_DATA_DIR;
const std::string kTinyDir = kTokenizers + "/wordpiece-tiny";

// Ids in wordpiece-tiny/vocab.txt.
// clang-format off
enum : int32_t {
  kPAD, kUNK, kCLS, kSEP, kMASK, kBang, kQuote, kApostrophe, kComma, kPeriod, kQuestion, kDollar,
  kDash, kColon, kLParen, kRParen, kThe, kA, kIs, kIt, kHello, kWorld, kUn, kAff, kAble, kRun,
  kNing, kNer, kS, kDon, kT, kCafe, kNaive, kTwenty, kTwentyThree, kFive, kNi, kHao, kMir, kOdos,
  kSigma, kStrasse, kQuick, kBrown, kFox, kJamoH, kJamoA, kJamoN, kCasedHello, kCasedWorld, kIng,
  kPlay, kEd, kN
};
// clang-format on

std::unique_ptr<Tokenizer> openTiny(const WordPieceOptions &options = {}) {
  std::string error;
  auto tokenizer = openWordPieceTokenizer(kTinyDir + "/vocab.txt", options, &error);
  EXPECT_TRUE(tokenizer) << error;
  return tokenizer;
}

std::string decoded(const Tokenizer &tokenizer, const Ids &ids) {
  std::string text, error;
  EXPECT_TRUE(tokenizer.decode(ids, &text, &error)) << error;
  return text;
}

/// A tokenizer over exactly `tokens` (one a line) in a scratch directory.
std::unique_ptr<Tokenizer> openVocab(const std::string &lines,
                                     const WordPieceOptions &options = {}) {
  TempDir dir;
  writeBytes(dir.file("vocab.txt"), lines);
  std::string error;
  auto tokenizer = openWordPieceTokenizer(dir.file("vocab.txt"), options, &error);
  EXPECT_TRUE(tokenizer) << error;
  return tokenizer;
}

TEST(TokenizerWordPiece, SplitsWordsPunctuationAndContinuations) {
  auto wp = openTiny();
  EXPECT_EQ(wp->kind(), "wordpiece");
  EXPECT_EQ(wp->vocabSize(), 54);
  EXPECT_EQ(wp->encode("Hello, world!"), (Ids{kHello, kComma, kWorld, kBang}));
  EXPECT_EQ(wp->encode("unaffable"), (Ids{kUn, kAff, kAble}));
  EXPECT_EQ(wp->encode("running runners"), (Ids{kRun, kNing, kRun, kNer, kS}));
  EXPECT_EQ(wp->encode("don't"), (Ids{kDon, kApostrophe, kT}));
  // Every non-alphanumeric ASCII character is punctuation to BERT, "$" too.
  EXPECT_EQ(wp->encode("$5 (2023)"),
            (Ids{kDollar, kFive, kLParen, kTwenty, kTwentyThree, kRParen}));
  EXPECT_EQ(wp->encode(""), Ids{});
  EXPECT_EQ(wp->encode(" \t\n "), Ids{});
}

TEST(TokenizerWordPiece, UnknownWordsBecomeOneUnknownToken) {
  auto wp = openTiny();
  EXPECT_EQ(wp->encode("xyzzy"), (Ids{kUNK}));
  // Spellable up to the last character: the whole word is [UNK], not a prefix.
  EXPECT_EQ(wp->encode("runx the"), (Ids{kUNK, kThe}));
  EXPECT_EQ(wp->encode("a # b"), (Ids{kA, kUNK, kUNK}));
}

TEST(TokenizerWordPiece, LowercasesAndStripsAccentsByDefault) {
  auto wp = openTiny();
  EXPECT_EQ(wp->encode("CAF\xc3\x89 Na\xc3\xafve"), (Ids{kCafe, kNaive})); // CAFÉ Naïve
  EXPECT_EQ(wp->encode("cafe\xcc\x81"), (Ids{kCafe}));                     // decomposed é
  EXPECT_EQ(wp->encode("\xd0\x9c\xd0\x98\xd0\xa0"), (Ids{kMir}));          // МИР
  // Final sigma: ΟΔΟΣ lowercases to οδος, a lone Σ to σ.
  EXPECT_EQ(wp->encode("\xce\x9f\xce\x94\xce\x9f\xce\xa3"), (Ids{kOdos}));
  EXPECT_EQ(wp->encode("\xce\xa3"), (Ids{kSigma}));
  // ß has no decomposition and str.lower() keeps it: no "strasse".
  EXPECT_EQ(wp->encode("Stra\xc3\x9f"
                       "e"),
            (Ids{kUNK}));
  EXPECT_EQ(wp->encode("STRASSE"), (Ids{kStrasse}));
  // Accent stripping is NFD: a Hangul syllable falls apart into its jamo.
  EXPECT_EQ(wp->encode("\xed\x95\x9c"), (Ids{kJamoH, kJamoA, kJamoN})); // 한
}

TEST(TokenizerWordPiece, SplitsCjkAndCleansControlsAndSpaces) {
  auto wp = openTiny();
  EXPECT_EQ(wp->encode("\xe4\xbd\xa0\xe5\xa5\xbd"), (Ids{kNi, kHao})); // 你好
  EXPECT_EQ(wp->encode("hello\xe4\xbd\xa0\xe5\xa5\xbdworld"), (Ids{kHello, kNi, kHao, kWorld}));
  // NUL, U+FFFD, a zero-width space (Cf) and malformed bytes vanish.
  EXPECT_EQ(wp->encode(std::string("hel\0lo", 6)), (Ids{kHello}));
  EXPECT_EQ(wp->encode("hel\xef\xbf\xbdlo wor\xe2\x80\x8bld \xff"), (Ids{kHello, kWorld}));
  // Tabs, CR/LF, NBSP, ideographic space and the line separator split words.
  EXPECT_EQ(wp->encode("hello\tworld\r\nthe\xc2\xa0quick\xe3\x80\x80"
                       "brown\xe2\x80\xa8"
                       "fox"),
            (Ids{kHello, kWorld, kThe, kQuick, kBrown, kFox}));
}

TEST(TokenizerWordPiece, KeepsSpecialTokensWhole) {
  auto wp = openTiny();
  EXPECT_EQ(wp->encode("[CLS] hello world [SEP]"), (Ids{kCLS, kHello, kWorld, kSEP}));
  EXPECT_EQ(wp->encode("hello[MASK]world[PAD][UNK]"), (Ids{kHello, kMASK, kWorld, kPAD, kUNK}));
  // Only the exact spelling is special.
  EXPECT_EQ(wp->encode("[cls]"), (Ids{kUNK, kUNK, kUNK}));
  EXPECT_EQ(wp->tokenId("[SEP]"), kSEP);
  EXPECT_EQ(wp->tokenId("nope"), std::nullopt);
}

TEST(TokenizerWordPiece, CasedOptionKeepsCaseAndAccents) {
  auto wp = openTiny({.lowercase = false});
  EXPECT_EQ(wp->encode("Hello World"), (Ids{kCasedHello, kCasedWorld}));
  EXPECT_EQ(wp->encode("hello HELLO caf\xc3\xa9"), (Ids{kHello, kUNK, kUNK}));
  // Accents can be stripped without lowercasing.
  auto stripped = openTiny({.lowercase = false, .stripAccents = true});
  EXPECT_EQ(stripped->encode("caf\xc3\xa9 Hello"), (Ids{kCafe, kCasedHello}));
  // And CJK splitting can be turned off.
  auto joined = openTiny({.splitCjk = false});
  EXPECT_EQ(joined->encode("\xe4\xbd\xa0\xe5\xa5\xbd"), (Ids{kUNK}));
}

TEST(TokenizerWordPiece, GreedyLongestMatchWithoutBacktracking) {
  // "una" is the longest prefix, then "##ffable": not un + ##affable.
  auto longest = openVocab("[UNK]\nun\nuna\n##ffable\n##affable\n");
  EXPECT_EQ(longest->encode("unaffable"), (Ids{2, 3}));
  // Greedy commits to "una" and fails: no retry with "un", so [UNK].
  auto greedy = openVocab("[UNK]\nun\nuna\n##affable\n");
  EXPECT_EQ(greedy->encode("unaffable"), (Ids{0}));
}

TEST(TokenizerWordPiece, WordsLongerThanTheLimitAreUnknown) {
  auto wp = openVocab("[UNK]\na\n##a\n");
  EXPECT_EQ(wp->encode(std::string(100, 'a')).size(), 100u);
  EXPECT_EQ(wp->encode(std::string(101, 'a')), (Ids{0}));
  auto longer = openVocab("[UNK]\na\n##a\n", {.maxCharsPerWord = 200});
  EXPECT_EQ(longer->encode(std::string(101, 'a')).size(), 101u);
}

TEST(TokenizerWordPiece, DecodeJoinsContinuationsAndCleansUpSpaces) {
  auto wp = openTiny();
  EXPECT_EQ(decoded(*wp, {kUn, kAff, kAble, kPeriod}), "unaffable.");
  EXPECT_EQ(decoded(*wp, {kHello, kComma, kWorld, kBang}), "hello, world!");
  EXPECT_EQ(decoded(*wp, {kDon, kApostrophe, kT}), "don't");
  EXPECT_EQ(decoded(*wp, {kCLS, kHello, kSEP}), "[CLS] hello [SEP]");
  EXPECT_EQ(decoded(*wp, {kNing, kRun}), "##ning run");
  EXPECT_EQ(decoded(*wp, {}), "");
  auto raw = openTiny({.cleanUpSpaces = false});
  EXPECT_EQ(decoded(*raw, {kHello, kComma, kWorld, kBang}), "hello , world !");
  std::string text, error;
  EXPECT_FALSE(wp->decode(Ids{kHello, 54}, &text, &error));
  EXPECT_THAT(error, HasSubstr("token id 54 is not in the WordPiece vocabulary (54 ids)"));
}

TEST(TokenizerWordPiece, VocabularyFileRules) {
  // CRLF line ends; a repeated token keeps its last id.
  auto crlf = openVocab("[UNK]\r\nhello\r\nworld\r\nhello\r\n");
  EXPECT_EQ(crlf->vocabSize(), 4);
  EXPECT_EQ(crlf->encode("hello world"), (Ids{3, 2}));
  std::string error;
  TempDir dir;
  writeBytes(dir.file("vocab.txt"), "");
  EXPECT_EQ(openWordPieceTokenizer(dir.file("vocab.txt"), {}, &error), nullptr);
  EXPECT_THAT(error, HasSubstr("vocab.txt: the vocabulary is empty"));
  writeBytes(dir.file("vocab.txt"), "hello\nworld\n");
  EXPECT_EQ(openWordPieceTokenizer(dir.file("vocab.txt"), {}, &error), nullptr);
  EXPECT_THAT(error, HasSubstr("the unknown token \"[UNK]\" is not in the vocabulary"));
  EXPECT_EQ(openWordPieceTokenizer(dir.file("missing.txt"), {}, &error), nullptr);
  EXPECT_THAT(error, HasSubstr("cannot open"));
  EXPECT_THAT(error, HasSubstr("missing.txt"));
}

TEST(TokenizerOpen, PicksTheKindFromTheFiles) {
  std::string error;
  auto bpe = Tokenizer::open(kTokenizers + "/gpt2", &error);
  ASSERT_TRUE(bpe) << error;
  EXPECT_EQ(bpe->kind(), "gpt2-bpe");
  auto wp = Tokenizer::open(kTinyDir, &error);
  ASSERT_TRUE(wp) << error;
  EXPECT_EQ(wp->kind(), "wordpiece");
  EXPECT_EQ(wp->encode("Hello"), (Ids{kHello})); // uncased by default, as BertTokenizer
}

TEST(TokenizerOpen, ReadsTokenizerConfigJson) {
  TempDir dir;
  writeBytes(dir.file("vocab.txt"), readBytes(kTinyDir + "/vocab.txt"));
  writeBytes(dir.file("tokenizer_config.json"),
             R"({"do_lower_case": false, "strip_accents": null, "model_max_length": 512,
                 "unk_token": {"content": "[UNK]", "lstrip": false}})");
  std::string error;
  auto wp = Tokenizer::open(dir.path(), &error);
  ASSERT_TRUE(wp) << error;
  EXPECT_EQ(wp->encode("Hello hello"), (Ids{kCasedHello, kHello}));

  writeBytes(dir.file("tokenizer_config.json"), R"({"do_lower_case": "yes"})");
  EXPECT_EQ(Tokenizer::open(dir.path(), &error), nullptr);
  EXPECT_THAT(error,
              HasSubstr("tokenizer_config.json: \"do_lower_case\" must be true, false or null"));
  writeBytes(dir.file("tokenizer_config.json"), R"({"unk_token": "<unk>"})");
  EXPECT_EQ(Tokenizer::open(dir.path(), &error), nullptr);
  EXPECT_THAT(error, HasSubstr("the unknown token \"<unk>\" is not in the vocabulary"));
  writeBytes(dir.file("tokenizer_config.json"), "{");
  EXPECT_EQ(Tokenizer::open(dir.path(), &error), nullptr);
  EXPECT_THAT(error, HasSubstr("tokenizer_config.json:1:2: not valid JSON: syntax error"));
}

TEST(TokenizerOpen, DirectoryProblemsAreNamed) {
  std::string error;
  EXPECT_EQ(Tokenizer::open("/nonexistent/tokenizer", &error), nullptr);
  EXPECT_THAT(error, HasSubstr("tokenizer directory /nonexistent/tokenizer does not exist"));
  EXPECT_EQ(Tokenizer::open(kTinyDir + "/vocab.txt", &error), nullptr);
  EXPECT_THAT(error, HasSubstr("is not a directory"));
  TempDir dir;
  EXPECT_EQ(Tokenizer::open(dir.path(), &error), nullptr);
  EXPECT_THAT(error, HasSubstr("has no tokenizer.json (Hugging Face), encoder.json + vocab.bpe "
                               "(GPT-2 BPE) or vocab.txt"));
  writeBytes(dir.file("encoder.json"), "{}");
  EXPECT_EQ(Tokenizer::open(dir.path(), &error), nullptr);
  EXPECT_THAT(error, HasSubstr("has encoder.json but no vocab.bpe"));
}

} // namespace
