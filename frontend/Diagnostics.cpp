//===- Diagnostics.cpp - Located errors, warnings and notes ---------------===//

#include "frontend/Diagnostics.h"

#include "frontend/Lexer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

using namespace llvm;

namespace tmc {

/// Enough to show every mistake in a real spec.
static constexpr unsigned kMaxShownErrors = 100;

namespace {
/// Holds a diagnostic's text until flush(), coloured (or not) as it would be
/// if printed straight to `final`: a terminal gets colours, a pipe does not,
/// and `--color` still decides over both.
class BufferFor : public raw_string_ostream {
public:
  BufferFor(std::string &text, const raw_ostream &final)
      : raw_string_ostream(text), finalHasColors(final.has_colors()) {
    enable_colors(true);
  }
  bool has_colors() const override { return finalHasColors; }

private:
  bool finalHasColors;
};
} // namespace

SMRange DiagnosticEngine::tokenRange(SMLoc loc) const {
  unsigned bufferId = sourceMgr.FindBufferContainingLoc(loc);
  if (!bufferId)
    return SMRange();
  StringRef buffer = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
  const char *start = loc.getPointer();
  // Re-lexing from the location gives the exact extent of any token kind
  // without the syntax tree having to store end locations.
  Token token = Lexer(StringRef(start, buffer.end() - start), nullptr).next();
  if (token.spelling.data() != start || token.spelling.size() < 2 ||
      token.is(Token::Kind::Newline))
    return SMRange();
  return SMRange(loc, SMLoc::getFromPointer(start + token.spelling.size()));
}

void DiagnosticEngine::report(SMLoc loc, SourceMgr::DiagKind kind,
                              const Twine &message, ArrayRef<SMFixIt> fixIts,
                              const Twine &hint) {
  if (kind != SourceMgr::DK_Note && !loc.isValid())
    ++unlocated;
  if (kind == SourceMgr::DK_Note && hidingNotes)
    return;
  hidingNotes = kind == SourceMgr::DK_Error && errors > kMaxShownErrors;
  if (hidingNotes) {
    ++hidden;
    return;
  }
  if (kind != SourceMgr::DK_Note || pending.empty())
    pending.push_back({loc, std::string()});
  BufferFor text(pending.back().text, os);

  SmallVector<SMRange, 1> ranges;
  if (SMRange range = tokenRange(loc); range.isValid())
    ranges.push_back(range);
  if (loc.isValid())
    sourceMgr.PrintMessage(text, loc, kind, message, ranges, fixIts);
  else
    SMDiagnostic("", kind, message.str()).print(nullptr, text);
  if (!hint.isTriviallyEmpty()) {
    std::string hintText = hint.str();
    if (!hintText.empty())
      SMDiagnostic("", SourceMgr::DK_Note, hintText).print(nullptr, text);
  }
}

void DiagnosticEngine::flush() {
  auto position = [&](SMLoc loc) {
    return std::make_pair(loc.isValid() ? sourceMgr.FindBufferContainingLoc(loc)
                                        : 0u,
                          loc.getPointer());
  };
  std::stable_sort(pending.begin(), pending.end(),
                   [&](const Pending &a, const Pending &b) {
                     return position(a.loc) < position(b.loc);
                   });
  for (const Pending &diagnostic : pending)
    os << diagnostic.text;
  if (hidden)
    SMDiagnostic("", SourceMgr::DK_Note,
                 std::to_string(hidden) + " more errors not shown")
        .print(nullptr, os);
  os.flush();
  pending.clear();
  hidden = 0;
}

void DiagnosticEngine::error(SMLoc loc, const Twine &message,
                             const Twine &hint) {
  ++errors;
  report(loc, SourceMgr::DK_Error, message, {}, hint);
}

void DiagnosticEngine::errorWithFix(SMLoc loc, const Twine &message,
                                    StringRef replacement, const Twine &hint) {
  ++errors;
  SMRange range = tokenRange(loc);
  if (!range.isValid())
    range = SMRange(loc, SMLoc::getFromPointer(loc.getPointer() + 1));
  SMFixIt fix(range, replacement);
  report(loc, SourceMgr::DK_Error, message, fix, hint);
}

void DiagnosticEngine::warning(SMLoc loc, const Twine &message,
                               const Twine &hint) {
  ++warnings;
  report(loc, SourceMgr::DK_Warning, message, {}, hint);
}

void DiagnosticEngine::note(SMLoc loc, const Twine &message) {
  report(loc, SourceMgr::DK_Note, message, {}, Twine());
}

std::string formatFloat(double value) {
  char buffer[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value)
      break;
  }
  std::string text = buffer;
  // Spell exponents the way specs do: 1e-5, not C's 1e-05.
  if (size_t e = text.find('e'); e != std::string::npos) {
    std::string mantissa = text.substr(0, e);
    bool negative = text[e + 1] == '-';
    size_t digits = text.find_first_not_of("+-0", e + 1);
    text = mantissa + (negative ? "e-" : "e") +
           (digits == std::string::npos ? "0" : text.substr(digits));
  }
  // Keep a float recognisable as one: 2 would read as an integer.
  if (text.find_first_of(".eEn") == std::string::npos)
    text += ".0";
  return text;
}

StringRef closestMatch(StringRef name, ArrayRef<StringRef> candidates) {
  StringRef best;
  unsigned bestDistance = ~0u;
  for (StringRef candidate : candidates) {
    unsigned distance = name.edit_distance_insensitive(candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (!best.empty() && bestDistance <= 1 && best != name)
    return best;
  // A truncated name (`sliding` for `sliding_window`) means that name, even
  // when another one is fewer edits away (`padding`).
  if (name.size() >= 4)
    for (StringRef candidate : candidates)
      if (candidate != name && candidate.starts_with_insensitive(name))
        return candidate;
  // Roughly one edit per three characters: `d_modle` finds `d_model`, while
  // `bias` does not turn into `heads`.
  unsigned limit = (std::max(name.size(), best.size()) + 2) / 3;
  if (!best.empty() && bestDistance <= limit && best != name)
    return best;
  // A longer or shorter spelling of a short name (`epsilon` for `eps`) is
  // too many edits away but still an obvious intent.
  for (StringRef candidate : candidates)
    if (std::min(name.size(), candidate.size()) >= 3 && candidate != name &&
        (name.starts_with_insensitive(candidate) ||
         candidate.starts_with_insensitive(name)))
      return candidate;
  return StringRef();
}

} // namespace tmc
