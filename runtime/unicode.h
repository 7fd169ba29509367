//===- unicode.h - UTF-8 and the Unicode properties tokenizers need -*- C++ -*-===//
//
// The runtime links into every compiled model and may use only the C++
// standard library, which knows nothing about Unicode. The tokenizers need
// UTF-8 decoding that never fails on bad bytes, a few general categories and
// BERT's lowercasing/accent stripping; the tables come from Node's ICU
// (runtime/gen_unicode_tables.js), the engine of the reference GPT-2 encoder.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tmr::unicode {

/// One step of UTF-8 decoding: the code point at text[pos] and its length in
/// bytes. Malformed input (a stray continuation byte, a truncated or overlong
/// sequence, a surrogate, a value above U+10FFFF) decodes as a single byte
/// with `valid == false`, so every byte string splits into units whose bytes
/// concatenate back to the input.
struct Utf8Unit {
  char32_t codePoint = 0; ///< U+FFFD when !valid.
  size_t length = 1;      ///< 1..4 bytes.
  bool valid = true;
};

/// Decodes the unit starting at text[pos]; pos must be < text.size().
Utf8Unit decodeUtf8(std::string_view text, size_t pos);

/// Appends the UTF-8 encoding of `c` (a scalar value) to `out`.
void appendUtf8(char32_t c, std::string &out);

/// General category L (what regex \p{L} matches).
bool isLetter(char32_t c);
/// General category N (\p{N}).
bool isNumber(char32_t c);
/// JavaScript's \s: the reference GPT-2 encoder's notion of whitespace
/// (tab..carriage return, space, NBSP, U+1680, U+2000..U+200A, U+2028/9,
/// U+202F, U+205F, U+3000, U+FEFF). Python's \s would differ only in U+001C..
/// U+001F and U+0085 (whitespace there) and U+FEFF (not whitespace there).
bool isJsSpace(char32_t c);
/// General category P (punctuation).
bool isPunctuation(char32_t c);
/// General category C: controls, format characters, surrogates, private use
/// and unassigned code points (what BERT's _is_control tests with
/// category.startswith("C")).
bool isOther(char32_t c);
/// General category Zs (space separators).
bool isSpaceSeparator(char32_t c);
/// General category Mn (nonspacing marks: combining accents and the like).
bool isNonspacingMark(char32_t c);

/// Appends the full lowercase mapping of `c` (one or two code points).
void appendLower(char32_t c, std::u32string &out);
/// Appends the jamo of a precomposed Hangul syllable (The Unicode Standard,
/// 3.12) and returns true; returns false, appending nothing, for any other
/// code point.
bool appendHangulJamo(char32_t c, std::u32string &out);
/// The Hangul syllable that `first` and `second` compose into (a leading
/// and a vowel jamo, or an LV syllable and a trailing jamo), or 0.
char32_t composeHangul(char32_t first, char32_t second);
/// Appends what remains of `c` after canonical decomposition (NFD) with the
/// nonspacing marks removed: BERT's _run_strip_accents one code point at a
/// time. Hangul syllables decompose into their jamo, as NFD does.
void appendStripped(char32_t c, std::u32string &out);

/// Normalization form C (canonical decomposition, then canonical
/// composition), as a tokenizer.json's NFC normalizer applies it. Bytes that
/// are not UTF-8 are copied unchanged and nothing composes across them.
std::string toNfc(std::string_view text);

} // namespace tmr::unicode
