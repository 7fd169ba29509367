//===- unicode.cpp - UTF-8 and the Unicode properties tokenizers need -----===//
//
// Lookups are binary searches over the generated tables in unicode_tables.inc;
// ASCII takes a fast path because almost all text the tokenizers see is ASCII.
//
//===----------------------------------------------------------------------===//
#include "runtime/unicode.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace tmr::unicode {
namespace {

struct CodeRange {
  char32_t first, last;
};
struct CaseRun {
  char32_t first, last;
  int32_t delta;
  int32_t stride;
};
struct CodeMap {
  char32_t from, to0, to1;
};
struct CodeMap3 {
  char32_t from, to0, to1, to2;
};

#include "runtime/unicode_tables.inc"

template <size_t N> bool inRanges(const CodeRange (&table)[N], char32_t c) {
  const CodeRange *it =
      std::upper_bound(std::begin(table), std::end(table), c,
                       [](char32_t v, const CodeRange &r) { return v < r.first; });
  return it != std::begin(table) && c <= std::prev(it)->last;
}

template <typename Map, size_t N> const Map *findMap(const Map (&table)[N], char32_t c) {
  const Map *it = std::lower_bound(std::begin(table), std::end(table), c,
                                   [](const Map &m, char32_t v) { return m.from < v; });
  return it != std::end(table) && it->from == c ? it : nullptr;
}

// Hangul syllable decomposition constants (The Unicode Standard, 3.12).
constexpr char32_t kHangulBase = 0xAC00, kJamoL = 0x1100, kJamoV = 0x1161, kJamoT = 0x11A7;
constexpr char32_t kJamoLCount = 19, kJamoVCount = 21, kJamoTCount = 28;
constexpr char32_t kHangulCount = kJamoLCount * kJamoVCount * kJamoTCount;

} // namespace

Utf8Unit decodeUtf8(std::string_view text, size_t pos) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(pos);
  if (lead < 0x80)
    return {lead, 1, true};
  size_t length;
  char32_t c, minimum;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, c = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, c = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, c = lead & 0x07, minimum = 0x10000;
  } else {
    return {0xFFFD, 1, false};
  }
  if (pos + length > text.size())
    return {0xFFFD, 1, false};
  for (size_t i = 1; i < length; ++i) {
    unsigned char next = byte(pos + i);
    if ((next & 0xC0) != 0x80)
      return {0xFFFD, 1, false};
    c = (c << 6) | (next & 0x3F);
  }
  if (c < minimum || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
    return {0xFFFD, 1, false};
  return {c, length, true};
}

void appendUtf8(char32_t c, std::string &out) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

bool isLetter(char32_t c) {
  if (c < 0x80)
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  return inRanges(kLetter, c);
}

bool isNumber(char32_t c) {
  if (c < 0x80)
    return c >= '0' && c <= '9';
  return inRanges(kNumber, c);
}

bool isJsSpace(char32_t c) { return inRanges(kJsSpace, c); }
bool isPunctuation(char32_t c) { return inRanges(kPunctuation, c); }
bool isOther(char32_t c) { return inRanges(kOther, c); }
bool isSpaceSeparator(char32_t c) { return inRanges(kSpaceSeparator, c); }
bool isNonspacingMark(char32_t c) { return c >= 0x300 && inRanges(kNonspacingMark, c); }

void appendLower(char32_t c, std::u32string &out) {
  if (c < 0x80) {
    out += (c >= 'A' && c <= 'Z') ? c + 32 : c;
    return;
  }
  if (const CodeMap *m = findMap(kLowerMulti, c)) {
    out += m->to0;
    out += m->to1;
    return;
  }
  const CaseRun *it = std::upper_bound(std::begin(kLowerRuns), std::end(kLowerRuns), c,
                                       [](char32_t v, const CaseRun &r) { return v < r.first; });
  if (it != std::begin(kLowerRuns)) {
    const CaseRun &run = *std::prev(it);
    if (c <= run.last && (c - run.first) % run.stride == 0) {
      out += static_cast<char32_t>(static_cast<int64_t>(c) + run.delta);
      return;
    }
  }
  out += c;
}

bool appendHangulJamo(char32_t c, std::u32string &out) {
  if (c < kHangulBase || c >= kHangulBase + kHangulCount)
    return false;
  char32_t index = c - kHangulBase;
  out += kJamoL + index / (kJamoVCount * kJamoTCount);
  out += kJamoV + (index % (kJamoVCount * kJamoTCount)) / kJamoTCount;
  if (char32_t t = index % kJamoTCount)
    out += kJamoT + t;
  return true;
}

char32_t composeHangul(char32_t first, char32_t second) {
  if (first >= kJamoL && first < kJamoL + kJamoLCount && second >= kJamoV &&
      second < kJamoV + kJamoVCount)
    return kHangulBase + ((first - kJamoL) * kJamoVCount + (second - kJamoV)) * kJamoTCount;
  if (first >= kHangulBase && first < kHangulBase + kHangulCount &&
      (first - kHangulBase) % kJamoTCount == 0 && second > kJamoT && second < kJamoT + kJamoTCount)
    return first + (second - kJamoT);
  return 0;
}

void appendStripped(char32_t c, std::u32string &out) {
  if (c < 0x80) {
    out += c;
    return;
  }
  if (isNonspacingMark(c))
    return;
  if (appendHangulJamo(c, out))
    return;
  if (const CodeMap3 *m = findMap(kStripAccents, c)) {
    for (char32_t to : {m->to0, m->to1, m->to2})
      if (to)
        out += to;
    return;
  }
  out += c;
}

} // namespace tmr::unicode
