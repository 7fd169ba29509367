//===- unicode_nfc.cpp - Canonical composition (NFC) ----------------------===//
//
// The algorithm of UAX #15: decompose every code point fully, put each run of
// non-starters in canonical order (a stable sort by combining class), then
// compose each starter with the following code points that it is not
// blocked from. Tables come from Node's ICU (gen_unicode_tables.js nfc);
// Hangul syllables are decomposed and composed arithmetically (The Unicode
// Standard, 3.12).
//
//===----------------------------------------------------------------------===//
#include "runtime/unicode.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace tmr::unicode {
namespace {

struct RankRange {
  char32_t first, last, rank;
};
struct Decomposition {
  char32_t from, offset, length;
};
struct Composition {
  char32_t first, second, composite;
};

#include "runtime/unicode_nfc_tables.inc"

/// Above every rank: what a leading non-starter blocks with.
constexpr char32_t kBlocked = 256;

/// 0 for a starter, else the code point's combining-class rank.
char32_t rankOf(char32_t c) {
  if (c < 0x300)
    return 0;
  const RankRange *it =
      std::upper_bound(std::begin(kCombiningRank), std::end(kCombiningRank), c,
                       [](char32_t v, const RankRange &r) { return v < r.first; });
  if (it == std::begin(kCombiningRank) || c > std::prev(it)->last)
    return 0;
  return std::prev(it)->rank;
}

void appendDecomposed(char32_t c, std::u32string &out) {
  if (appendHangulJamo(c, out))
    return;
  const Decomposition *it =
      std::lower_bound(std::begin(kDecompositions), std::end(kDecompositions), c,
                       [](const Decomposition &d, char32_t v) { return d.from < v; });
  if (it == std::end(kDecompositions) || it->from != c) {
    out += c;
    return;
  }
  out.append(kDecompositionData + it->offset, it->length);
}

/// The primary composite of (first, second), or 0 when there is none.
char32_t composePair(char32_t first, char32_t second) {
  if (char32_t syllable = composeHangul(first, second))
    return syllable;
  const Composition *it =
      std::lower_bound(std::begin(kCompositions), std::end(kCompositions), std::pair(first, second),
                       [](const Composition &c, std::pair<char32_t, char32_t> v) {
                         return std::pair(c.first, c.second) < v;
                       });
  if (it == std::end(kCompositions) || it->first != first || it->second != second)
    return 0;
  return it->composite;
}

/// Canonical order: each run of non-starters sorted stably by rank.
void reorder(std::u32string &text) {
  for (size_t i = 1; i < text.size(); ++i) {
    char32_t c = text[i];
    char32_t rank = rankOf(c);
    if (rank == 0)
      continue;
    size_t j = i;
    while (j > 0 && rankOf(text[j - 1]) > rank) {
      text[j] = text[j - 1];
      --j;
    }
    text[j] = c;
  }
}

/// Composes a decomposed, reordered text in place (UAX #15's sample code).
void compose(std::u32string &text) {
  if (text.empty())
    return;
  size_t starter = 0;
  char32_t lastRank = rankOf(text[0]) == 0 ? 0 : kBlocked;
  size_t kept = 1;
  for (size_t i = 1; i < text.size(); ++i) {
    char32_t c = text[i];
    char32_t rank = rankOf(c);
    char32_t composite = composePair(text[starter], c);
    if (composite != 0 && (lastRank < rank || lastRank == 0)) {
      text[starter] = composite;
      continue;
    }
    if (rank == 0)
      starter = kept;
    lastRank = rank;
    text[kept++] = c;
  }
  text.resize(kept);
}

} // namespace

std::string toNfc(std::string_view text) {
  // Code points below U+0300 (lead bytes below 0xCC) neither decompose in
  // NFC nor compose with one another.
  if (std::all_of(text.begin(), text.end(),
                  [](char b) { return static_cast<unsigned char>(b) < 0xCC; }))
    return std::string(text);
  std::string out;
  out.reserve(text.size());
  std::u32string segment;
  auto flush = [&] {
    reorder(segment);
    compose(segment);
    for (char32_t c : segment)
      appendUtf8(c, out);
    segment.clear();
  };
  for (size_t pos = 0; pos < text.size();) {
    Utf8Unit unit = decodeUtf8(text, pos);
    if (unit.valid) {
      appendDecomposed(unit.codePoint, segment);
    } else {
      flush();
      out += text[pos];
    }
    pos += unit.length;
  }
  flush();
  return out;
}

} // namespace tmr::unicode
