//===- TokenizerBpeTest.cpp - GPT-2 byte-level BPE ------------------------===//
//
// Against the reference: TokenizerGpt2Reference.json holds what the npm
// package gpt-3-encoder (the JavaScript port of OpenAI's encoder.py) returns
// for a set of sentences, pre-tokenizer pieces included. The algorithm itself
// is also tested on tiny hand-made vocabularies where the merges are known.
//
//===----------------------------------------------------------------------===//
#include "runtime/tokenizer.h"
#include "tests/unit/runtime/TempDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <random>

using namespace tmr;
using namespace tmr::test;
using testing::HasSubstr;

namespace {

const std::string kGpt2Dir = std::string(TOKENIZER_DATA_DIR) + "/gpt2";

/// The GPT-2 tokenizer, loaded once for all tests (it takes ~0.1 s).
const Tokenizer &gpt2() {
  static std::unique_ptr<Tokenizer> tokenizer = [] {
    std::string error;
    auto t = Tokenizer::open(kGpt2Dir, &error);
    EXPECT_TRUE(t) << error;
    return t;
  }();
  if (!tokenizer)
    throw std::runtime_error("cannot load " + kGpt2Dir);
  return *tokenizer;
}

std::string decodeOrDie(const Tokenizer &tokenizer, const std::vector<int32_t> &ids) {
  std::string text, error;
  EXPECT_TRUE(tokenizer.decode(ids, &text, &error)) << error;
  return text;
}

TEST(TokenizerBpe, MatchesTheReferenceEncoder) {
  nlohmann::json reference = nlohmann::json::parse(readBytes(GPT2_REFERENCE_JSON));
  ASSERT_GE(reference["cases"].size(), 40u);
  for (const auto &c : reference["cases"]) {
    std::string text = c["text"];
    SCOPED_TRACE(testing::Message() << "text: " << nlohmann::json(text).dump());
    std::vector<std::string_view> pieces = splitGpt2Pretokens(text);
    EXPECT_EQ(std::vector<std::string>(pieces.begin(), pieces.end()),
              c["pieces"].get<std::vector<std::string>>());
    std::vector<int32_t> ids = gpt2().encode(text);
    EXPECT_EQ(ids, c["ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(decodeOrDie(gpt2(), ids), text);
  }
}

TEST(TokenizerBpe, RoundTripsArbitraryUtf8) {
  // Code points from every class the pre-tokenizer distinguishes.
  // clang-format off
  const std::vector<std::string> pool = {
      "a", "Z", "q", " ", " ", "  ", "\n", "\r\n", "\t", "0", "7", "'", "'s", "'ll", ".", ",",
      "!", "?", "-", "_", "#", "\xc3\xa9", "\xc3\x9f", "\xd0\xb6", "\xce\xa9", "\xe4\xb8\xad",
      "\xe3\x81\x82", "\xed\x95\x9c", "\xd9\xa3", "\xc2\xbd", "\xc2\xa0", "\xe2\x80\x83",
      "\xe2\x80\x8b", "\xcc\x81", "\xf0\x9f\x98\x80", "\xf0\x9f\x8d\x95", "\xe2\x80\x8d",
      "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9", "\xf0\x9f\x87\xab\xf0\x9f\x87\xb7",
      "\xef\xbb\xbf", "\xe2\x80\xa8", "\x7f", "\x01"};
  // clang-format on
  std::mt19937 rng(1234);
  std::uniform_int_distribution<size_t> pick(0, pool.size() - 1), length(0, 40);
  for (int trial = 0; trial < 300; ++trial) {
    std::string text;
    for (size_t i = length(rng); i > 0; --i)
      text += pool[pick(rng)];
    std::vector<int32_t> ids = gpt2().encode(text);
    EXPECT_EQ(decodeOrDie(gpt2(), ids), text);
    std::string joined;
    for (std::string_view piece : splitGpt2Pretokens(text))
      joined += piece;
    EXPECT_EQ(joined, text);
  }
}

TEST(TokenizerBpe, RoundTripsMalformedUtf8Bytes) {
  for (std::string text : {std::string("\xff\xfe"), std::string("ab\xe2\x82"), std::string("\x80x"),
                           std::string("\xc0\xaf overlong"), std::string("\xed\xa0\x80 surrogate"),
                           std::string("nul\0byte", 8)}) {
    std::vector<int32_t> ids = gpt2().encode(text);
    EXPECT_FALSE(ids.empty());
    EXPECT_EQ(decodeOrDie(gpt2(), ids), text);
  }
}

TEST(TokenizerBpe, PiecewiseDecodingConcatenates) {
  // The emoji's four bytes are split over tokens; each piece alone is
  // partial UTF-8 but the pieces concatenate to the text.
  std::string text = "I love \xf0\x9f\x8d\x95 and \xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa9!";
  std::vector<int32_t> ids = gpt2().encode(text);
  std::string joined;
  for (int32_t id : ids)
    joined += decodeOrDie(gpt2(), {id});
  EXPECT_EQ(joined, text);
}

TEST(TokenizerBpe, VocabularyAndSpecialToken) {
  EXPECT_EQ(gpt2().kind(), "gpt2-bpe");
  EXPECT_EQ(gpt2().vocabSize(), 50257);
  EXPECT_EQ(gpt2().tokenId("<|endoftext|>"), 50256);
  EXPECT_EQ(gpt2().tokenId("\xc4\xa0the"), 262); // "Ġthe": the vocabulary's spelling of " the"
  EXPECT_EQ(gpt2().tokenId("no such token"), std::nullopt);
  EXPECT_EQ(decodeOrDie(gpt2(), {50256}), "<|endoftext|>");
  EXPECT_EQ(gpt2().encode(""), std::vector<int32_t>{});
}

TEST(TokenizerBpe, DecodeRejectsIdsOutsideTheVocabulary) {
  std::string text = "unchanged", error;
  EXPECT_FALSE(gpt2().decode(std::vector<int32_t>{15496, 50257}, &text, &error));
  EXPECT_THAT(error, HasSubstr("token id 50257 is not in the GPT-2 vocabulary (50257 ids)"));
  EXPECT_EQ(text, "unchanged");
  EXPECT_FALSE(gpt2().decode(std::vector<int32_t>{-1}, &text, &error));
  EXPECT_THAT(error, HasSubstr("token id -1"));
}

TEST(TokenizerBpe, DecodeKnownLeavesOutIdsPastTheVocabulary) {
  // A model padded to 50304 ids may generate, or be given, 50257..50303.
  std::vector<int32_t> ids = gpt2().encode("Hello world");
  std::vector<int32_t> padded = {50300, ids[0], 50257, ids[1], 50303};
  size_t dropped = 99;
  EXPECT_EQ(gpt2().decodeKnown(padded, &dropped), "Hello world");
  EXPECT_EQ(dropped, 3u);
  EXPECT_EQ(gpt2().decodeKnown(ids, &dropped), "Hello world");
  EXPECT_EQ(dropped, 0u);
  EXPECT_EQ(gpt2().decodeKnown(std::vector<int32_t>{-1, 60000}, &dropped), "");
  EXPECT_EQ(dropped, 2u);
}

/// encoder.json for the 256 byte symbols (GPT-2's bytes_to_unicode; byte b
/// gets id b) plus `extra` tokens from id 256 on.
std::string tinyEncoderJson(const std::vector<std::string> &extra) {
  nlohmann::json json = nlohmann::json::object();
  int next = 256, id = 0;
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    uint32_t c = printable ? b : next++;
    std::string symbol;
    if (c < 0x80) {
      symbol += char(c);
    } else {
      symbol += char(0xC0 | (c >> 6));
      symbol += char(0x80 | (c & 0x3F));
    }
    json[symbol] = id++;
  }
  for (const std::string &token : extra)
    json[token] = id++;
  return json.dump();
}

TEST(TokenizerBpe, MergesByRankAndEveryOccurrence) {
  TempDir dir;
  writeBytes(dir.file("encoder.json"), tinyEncoderJson({"bc", "ab", "abc",
                                                        "\xc4\xa0"
                                                        "ab"}));
  writeBytes(dir.file("vocab.bpe"), "#version: 0.2\nb c\na b\nab c\n\xc4\xa0 ab\n");
  std::string error;
  auto bpe = Tokenizer::open(dir.path(), &error);
  ASSERT_TRUE(bpe) << error;
  const int32_t a = 'a', c = 'c', bc = 256, ab = 257, spaceAb = 259;
  // "b c" outranks "a b": "abc" -> a + bc, never ab + c (and so never abc).
  EXPECT_EQ(bpe->encode("abc"), (std::vector<int32_t>{a, bc}));
  // Every occurrence merges in one round.
  EXPECT_EQ(bpe->encode("abab"), (std::vector<int32_t>{ab, ab}));
  EXPECT_EQ(bpe->encode("ab ab"), (std::vector<int32_t>{ab, spaceAb}));
  EXPECT_EQ(bpe->encode("ac"), (std::vector<int32_t>{a, c}));
  EXPECT_EQ(decodeOrDie(*bpe, {a, bc, spaceAb}), "abc ab");
}

TEST(TokenizerBpe, MalformedFilesAreNamedErrors) {
  auto openError = [](const std::string &encoder, const std::string &merges) {
    TempDir dir;
    writeBytes(dir.file("encoder.json"), encoder);
    writeBytes(dir.file("vocab.bpe"), merges);
    std::string error;
    EXPECT_EQ(Tokenizer::open(dir.path(), &error), nullptr);
    return error;
  };
  std::string good = tinyEncoderJson({"ab"});
  EXPECT_THAT(openError("{not json", "a b\n"),
              HasSubstr("encoder.json:1:3: not valid JSON: syntax error while parsing object key"));
  EXPECT_THAT(openError("[1, 2]", "a b\n"), HasSubstr("encoder.json: expected a JSON object"));
  EXPECT_THAT(openError(R"({"a": "x"})", ""), HasSubstr("the id of token \"a\" is not an integer"));
  EXPECT_THAT(openError(R"({"a": 0, "b": 0})", ""), HasSubstr("id 0 is used by two tokens"));
  EXPECT_THAT(openError(R"({"a b": 0})", ""), HasSubstr("outside GPT-2's byte alphabet"));
  EXPECT_THAT(openError(R"({"a": 0})", ""), HasSubstr("no token for byte 0"));
  EXPECT_THAT(openError(good, "#version: 0.2\na b\na b c\n"),
              HasSubstr("vocab.bpe:3: expected two tokens separated by one space"));
  EXPECT_THAT(openError(good, "a b\na x\n"),
              HasSubstr("vocab.bpe:2: \"ax\" is not in the vocabulary"));
  EXPECT_THAT(openError(good, "zz b\n"), HasSubstr("vocab.bpe:1: \"zz\" is not in the vocabulary"));
}

} // namespace
