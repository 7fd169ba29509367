//===- message_text.h - Untrusted text made fit for a message ----*- C++ -*-===//
//
// Names read from files (tensor names, dtypes, tokens) are untrusted: a NUL
// byte would end the message where it is printed with %s, so that the name
// reads as another (a tensor 'out.bias\0x' shown as 'out.bias'), control and
// bidirectional characters can rewrite the terminal line, and a name may be
// megabytes long. quoted() shows such text unambiguously and briefly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/unicode.h"

#include <cstdio>
#include <string>
#include <string_view>

namespace tmr {

/// Whether `c` changes how the text around it is shown: C0/C1 controls, DEL,
/// line and paragraph separators, bidirectional marks and overrides, BOM.
inline bool isInvisibleInMessage(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x200E || c == 0x200F ||
         (c >= 0x2028 && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0xFEFF;
}

/// `text` in single quotes: bytes that are not UTF-8 and the characters of
/// isInvisibleInMessage as \xNN or \u{N}, the quote and backslash as \' and
/// \\; past `limit` bytes of `text` the rest is cut and the length said, as
/// 'abc'... (10485760 bytes).
inline std::string quoted(std::string_view text, size_t limit = 200) {
  std::string out = "'";
  size_t pos = 0;
  while (pos < text.size() && pos < limit) {
    unicode::Utf8Unit unit = unicode::decodeUtf8(text, pos);
    char escape[16];
    if (!unit.valid || unit.codePoint < 0x80) { // one byte
      char c = text[pos];
      if (c == '\'' || c == '\\') {
        out += {'\\', c};
      } else if (!unit.valid || isInvisibleInMessage(unit.codePoint)) {
        std::snprintf(escape, sizeof escape, "\\x%02X", static_cast<unsigned char>(c));
        out += escape;
      } else {
        out += c;
      }
    } else if (isInvisibleInMessage(unit.codePoint)) {
      std::snprintf(escape, sizeof escape, "\\u{%X}", static_cast<unsigned>(unit.codePoint));
      out += escape;
    } else {
      out.append(text.substr(pos, unit.length));
    }
    pos += unit.length;
  }
  out += '\'';
  if (pos < text.size())
    out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

} // namespace tmr
