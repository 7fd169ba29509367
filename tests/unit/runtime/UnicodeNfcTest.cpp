//===- UnicodeNfcTest.cpp - Normalization form C ---------------------------===//
//
// tmr::unicode::toNfc against V8's String.prototype.normalize('NFC')
// (UnicodeNfcReference.json): every code point that decomposes, alone and
// decomposed, and random texts that need canonical reordering and blocking.
//
//===----------------------------------------------------------------------===//
#include "runtime/unicode.h"
#include "tests/unit/runtime/TempDir.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace tmr;
using Json = nlohmann::json;

namespace {

TEST(UnicodeNfc, MatchesV8OnEveryDecomposableCodePointAndRandomTexts) {
  Json reference = Json::parse(test::readBytes(NFC_REFERENCE_JSON));
  ASSERT_GE(reference["cases"].size(), 6000u);
  size_t changed = 0;
  for (const Json &c : reference["cases"]) {
    std::string text = c[0], expected = c[1];
    EXPECT_EQ(unicode::toNfc(text), expected) << Json(text).dump();
    EXPECT_EQ(unicode::toNfc(expected), expected) << "not idempotent: " << Json(text).dump();
    changed += text != expected;
  }
  // Both kinds are there: texts NFC changes and texts it leaves alone.
  EXPECT_GE(changed, 3000u);
}

TEST(UnicodeNfc, ComposesReordersAndLeavesSingletonsDecomposed) {
  EXPECT_EQ(unicode::toNfc("e\xCC\x81"), "\xC3\xA9");    // e + U+0301 -> U+00E9
  EXPECT_EQ(unicode::toNfc("\xE2\x84\xAB"), "\xC3\x85"); // U+212B ANGSTROM -> U+00C5
  EXPECT_EQ(unicode::toNfc("\xE1\x84\x80\xE1\x85\xA1"), "\xEA\xB0\x80"); // jamo -> U+AC00
  // s + U+0307 + U+0323: U+0323 (class 220) sorts before U+0307 (230), so
  // the result is U+1E69, not U+1E61 followed by U+0323.
  EXPECT_EQ(unicode::toNfc("s\xCC\x87\xCC\xA3"), "\xE1\xB9\xA9");
  EXPECT_EQ(unicode::toNfc("plain ASCII text"), "plain ASCII text");
  EXPECT_EQ(unicode::toNfc(""), "");
}

TEST(UnicodeNfc, BytesThatAreNotUtf8AreKeptAndSeparate) {
  // The stray 0xFF is copied; the accent after it has no starter to join.
  EXPECT_EQ(unicode::toNfc("e\xFF\xCC\x81"), "e\xFF\xCC\x81");
  EXPECT_EQ(unicode::toNfc("\xCC"), "\xCC");
  EXPECT_EQ(unicode::toNfc("a\xCC\x81\xC0\xAF"), "\xC3\xA1\xC0\xAF");
}

} // namespace
