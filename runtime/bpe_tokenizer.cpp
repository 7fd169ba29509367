//===- bpe_tokenizer.cpp - GPT-2 byte-level BPE ---------------------------===//
//
// The algorithm of OpenAI's gpt-2/src/encoder.py (and of its JavaScript port,
// the npm package gpt-3-encoder, which the tests compare against):
//   1. cut the text with the pre-tokenizer regex (splitGpt2Pretokens);
//   2. map each UTF-8 byte of a piece to a printable stand-in character
//      (bytes_to_unicode), one symbol per byte;
//   3. repeatedly merge every occurrence of the adjacent pair with the lowest
//      rank in vocab.bpe, left to right, until no ranked pair remains;
//   4. look the symbols up in encoder.json.
// Symbols are kept as vocabulary ids rather than strings; every merge result
// is checked to be in the vocabulary at load time, so this is equivalent.
// Ranks are keyed by the pair itself, as in encoder.py; gpt-3-encoder joins
// the pair with "," instead, which could in principle confuse pairs around
// commas, though no string of up to five JSON punctuation characters differs.
//
//===----------------------------------------------------------------------===//
#include "runtime/tokenizer.h"
#include "runtime/tokenizer_internal.h"
#include "runtime/unicode.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cctype>
#include <limits>
#include <unordered_map>

namespace tmr {
namespace {

using detail::fail;

/// GPT-2's bytes_to_unicode(): printable Latin-1 bytes stand for themselves,
/// the other 68 bytes get U+0100.. in byte order, so no token contains
/// whitespace or control characters.
std::array<char32_t, 256> byteToUnicode() {
  std::array<char32_t, 256> table{};
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    table[b] = printable ? static_cast<char32_t>(b) : next++;
  }
  return table;
}

enum class CharClass { Letter, Number, Space, Other };

CharClass classify(const unicode::Utf8Unit &unit) {
  if (!unit.valid)
    return CharClass::Other;
  if (unicode::isLetter(unit.codePoint))
    return CharClass::Letter;
  if (unicode::isNumber(unit.codePoint))
    return CharClass::Number;
  if (unicode::isJsSpace(unit.codePoint))
    return CharClass::Space;
  return CharClass::Other;
}

/// The end of the run of `cls` characters starting at `pos`.
size_t scanRun(std::string_view text, size_t pos, CharClass cls) {
  while (pos < text.size()) {
    unicode::Utf8Unit unit = unicode::decodeUtf8(text, pos);
    if (classify(unit) != cls)
      break;
    pos += unit.length;
  }
  return pos;
}

/// A run of whitespace, as the regexes' `\s` alternatives see it.
struct SpaceRun {
  size_t end;          ///< after its last character
  size_t lastStart;    ///< where its last character starts
  size_t afterNewline; ///< after its last \r or \n; its start if it has none
  int count;           ///< characters
};

SpaceRun scanSpaces(std::string_view text, size_t pos) {
  SpaceRun run{pos, pos, pos, 0};
  while (run.end < text.size()) {
    unicode::Utf8Unit unit = unicode::decodeUtf8(text, run.end);
    if (classify(unit) != CharClass::Space)
      break;
    run.lastStart = run.end;
    run.end += unit.length;
    if (text[run.lastStart] == '\r' || text[run.lastStart] == '\n')
      run.afterNewline = run.end;
    ++run.count;
  }
  return run;
}

/// `\s+(?!\S)|\s+` on the run at `pos`: it backs off one character when the
/// run is followed by a non-space, which leaves that character's space to
/// prefix the next word; a single space before a non-space is `\s+`.
size_t spaceMatchEnd(std::string_view text, const SpaceRun &run) {
  if (run.end < text.size() && run.count >= 2)
    return run.lastStart;
  return run.end;
}

/// Length of the contraction ('s 't 're 've 'm 'll 'd) at `pos`, or 0.
size_t contractionLength(std::string_view text, size_t pos) {
  if (text[pos] != '\'')
    return 0;
  std::string_view rest = text.substr(pos + 1);
  for (std::string_view suffix : {"s", "t", "re", "ve", "m", "ll", "d"})
    if (rest.starts_with(suffix))
      return 1 + suffix.size();
  return 0;
}

/// The end of the regex match that starts at `pos`; the alternatives are
/// tried in the regex's order, with its backtracking worked out by hand.
size_t matchEnd(std::string_view text, size_t pos) {
  if (size_t length = contractionLength(text, pos))
    return pos + length;
  // ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: the optional space is taken
  // only when the class run follows it.
  if (text[pos] == ' ' && pos + 1 < text.size()) {
    CharClass next = classify(unicode::decodeUtf8(text, pos + 1));
    if (next != CharClass::Space)
      return scanRun(text, pos + 1, next);
  }
  unicode::Utf8Unit first = unicode::decodeUtf8(text, pos);
  CharClass cls = classify(first);
  if (cls != CharClass::Space)
    return scanRun(text, pos, cls);
  return spaceMatchEnd(text, scanSpaces(text, pos));
}

/// The end of the match at `pos` of Llama 3's pre-tokenizer regex
///   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
///   ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
/// (Qwen2's has \p{N} for \p{N}{1,3}: `maxDigits` 1), alternatives tried in
/// order and backtracking worked out by hand, as matchEnd does for GPT-2's.
size_t matchEndLlama3(std::string_view text, size_t pos, int maxDigits) {
  if (text[pos] == '\'') {
    for (std::string_view suffix : {"s", "t", "re", "ve", "m", "ll", "d"}) {
      bool same = pos + 1 + suffix.size() <= text.size();
      for (size_t i = 0; same && i < suffix.size(); ++i)
        same = std::tolower(static_cast<unsigned char>(text[pos + 1 + i])) == suffix[i];
      if (same)
        return pos + 1 + suffix.size();
    }
  }
  auto isNewline = [&](size_t at) { return text[at] == '\r' || text[at] == '\n'; };
  unicode::Utf8Unit first = unicode::decodeUtf8(text, pos);
  CharClass cls = classify(first);
  // `[^\r\n\p{L}\p{N}]?\p{L}+`: letters, after at most one character that
  // is neither a newline, a letter nor a number.
  if (cls == CharClass::Letter)
    return scanRun(text, pos, CharClass::Letter);
  const size_t second = pos + first.length;
  if (cls != CharClass::Number && !isNewline(pos) && second < text.size() &&
      classify(unicode::decodeUtf8(text, second)) == CharClass::Letter)
    return scanRun(text, second, CharClass::Letter);
  if (cls == CharClass::Number) {
    size_t end = pos;
    for (int digits = 0; digits < maxDigits && end < text.size(); ++digits) {
      unicode::Utf8Unit unit = unicode::decodeUtf8(text, end);
      if (classify(unit) != CharClass::Number)
        break;
      end += unit.length;
    }
    return end;
  }
  // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
  size_t other = text[pos] == ' ' && second < text.size() ? second : pos;
  if (classify(unicode::decodeUtf8(text, other)) == CharClass::Other) {
    size_t end = scanRun(text, other, CharClass::Other);
    while (end < text.size() && isNewline(end))
      ++end;
    return end;
  }
  // A whitespace run: `\s*[\r\n]+` ends after its last newline; then
  // `\s+(?!\S)` and `\s+` as in GPT-2's.
  SpaceRun run = scanSpaces(text, pos);
  if (run.afterNewline > pos)
    return run.afterNewline;
  return spaceMatchEnd(text, run);
}

class BpeTokenizer final : public Tokenizer {
public:
  bool load(const std::string &encoderPath, const std::string &mergesPath, std::string *error);
  /// The vocabulary (token -> id) and merges of a tokenizer.json; `where`
  /// names the file in messages.
  bool load(const nlohmann::json &vocab, const std::vector<detail::MergePair> &merges,
            const std::string &where, std::string *error);
  void setOptions(const detail::ByteLevelOptions &options) { options_ = options; }

  std::string_view kind() const override { return "gpt2-bpe"; }
  std::vector<int32_t> encode(std::string_view text) const override;
  bool decode(std::span<const int32_t> ids, std::string *text, std::string *error) const override;
  int64_t vocabSize() const override { return static_cast<int64_t>(tokenBytes_.size()); }
  std::optional<int32_t> tokenId(std::string_view token) const override {
    auto it = ids_.find(std::string(token));
    return it == ids_.end() ? std::nullopt : std::optional<int32_t>(it->second);
  }

private:
  bool loadEncoder(const std::string &path, std::string *error);
  bool loadVocab(const nlohmann::json &json, const std::string &path, std::string *error);
  bool loadMerges(const std::string &path, std::string *error);
  bool addMerge(const std::string &left, const std::string &right, int32_t rank,
                const std::string &where, std::string *error);
  void encodePiece(std::string_view piece, std::vector<int32_t> &out) const;
  std::unordered_map<std::string, int32_t> ids_; ///< vocabulary spelling -> id
  std::vector<std::string> tokenBytes_;          ///< id -> raw bytes
  std::vector<bool> present_;                    ///< id -> used by some entry
  std::array<int32_t, 256> byteIds_{};           ///< byte -> id of its symbol
  detail::MergeTable merges_;
  detail::ByteLevelOptions options_;
};

bool BpeTokenizer::loadEncoder(const std::string &path, std::string *error) {
  std::string contents;
  if (!detail::readWholeFile(path, &contents, error))
    return false;
  nlohmann::json json;
  if (!detail::parseJson(path, contents, &json, error))
    return false;
  return loadVocab(json, path, error);
}

bool BpeTokenizer::loadVocab(const nlohmann::json &json, const std::string &path,
                             std::string *error) {
  if (!json.is_object())
    return fail(error, path + ": expected a JSON object mapping tokens to ids");
  std::unordered_map<char32_t, unsigned char> unicodeToByte;
  std::array<char32_t, 256> table = byteToUnicode();
  for (int b = 0; b < 256; ++b)
    unicodeToByte[table[b]] = static_cast<unsigned char>(b);

  for (const auto &[token, value] : json.items()) {
    int32_t id = 0;
    if (!detail::readTokenId(value, token, path, &id, error))
      return false;
    if (static_cast<size_t>(id) >= tokenBytes_.size()) {
      tokenBytes_.resize(id + 1);
      present_.resize(id + 1);
    }
    if (present_[id])
      return fail(error, path + ": id " + std::to_string(id) + " is used by two tokens");
    std::string bytes;
    for (size_t pos = 0; pos < token.size();) {
      unicode::Utf8Unit unit = unicode::decodeUtf8(token, pos);
      auto it = unicodeToByte.find(unit.codePoint);
      if (!unit.valid || it == unicodeToByte.end())
        return fail(error, path + ": token \"" + token +
                               "\" has a character outside GPT-2's byte alphabet");
      bytes += static_cast<char>(it->second);
      pos += unit.length;
    }
    tokenBytes_[id] = std::move(bytes);
    present_[id] = true;
    ids_.emplace(token, id);
  }
  for (int b = 0; b < 256; ++b) {
    std::string symbol;
    unicode::appendUtf8(table[b], symbol);
    auto it = ids_.find(symbol);
    if (it == ids_.end())
      return fail(error, path + ": no token for byte " + std::to_string(b) + " (\"" + symbol +
                             "\"), so not every text could be encoded");
    byteIds_[b] = it->second;
  }
  return true;
}

bool BpeTokenizer::loadMerges(const std::string &path, std::string *error) {
  std::string contents;
  if (!detail::readWholeFile(path, &contents, error))
    return false;
  int32_t rank = 0;
  size_t lineNumber = 0;
  for (size_t start = 0; start < contents.size();) {
    size_t newline = contents.find('\n', start);
    size_t end = newline == std::string::npos ? contents.size() : newline;
    std::string_view line(contents.data() + start, end - start);
    start = end + 1;
    ++lineNumber;
    if (line.ends_with('\r'))
      line.remove_suffix(1);
    // encoder.py skips the "#version: 0.2" header and the empty last line.
    if (line.empty() || (lineNumber == 1 && line.starts_with("#version")))
      continue;
    auto where = [&] { return path + ":" + std::to_string(lineNumber) + ": "; };
    size_t space = line.find(' ');
    if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string_view::npos)
      return fail(error, where() + "expected two tokens separated by one space");
    if (!addMerge(std::string(line.substr(0, space)), std::string(line.substr(space + 1)), rank++,
                  where(), error))
      return false;
  }
  return true;
}

bool BpeTokenizer::addMerge(const std::string &left, const std::string &right, int32_t rank,
                            const std::string &where, std::string *error) {
  return merges_.add(left, right, rank, ids_, where, error);
}

bool BpeTokenizer::load(const nlohmann::json &vocab, const std::vector<detail::MergePair> &merges,
                        const std::string &where, std::string *error) {
  if (!loadVocab(vocab, where + ": \"model\".\"vocab\"", error))
    return false;
  for (size_t rank = 0; rank < merges.size(); ++rank)
    if (!addMerge(merges[rank].left, merges[rank].right, static_cast<int32_t>(rank),
                  where + ": merge " + std::to_string(rank) + ": ", error))
      return false;
  return true;
}

bool BpeTokenizer::load(const std::string &encoderPath, const std::string &mergesPath,
                        std::string *error) {
  return loadEncoder(encoderPath, error) && loadMerges(mergesPath, error);
}

void BpeTokenizer::encodePiece(std::string_view piece, std::vector<int32_t> &out) const {
  if (options_.ignoreMerges) {
    static const std::array<char32_t, 256> table = byteToUnicode();
    std::string spelling;
    for (char c : piece)
      unicode::appendUtf8(table[static_cast<unsigned char>(c)], spelling);
    if (auto it = ids_.find(spelling); it != ids_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  std::vector<int32_t> word;
  word.reserve(piece.size());
  for (char c : piece)
    word.push_back(byteIds_[static_cast<unsigned char>(c)]);
  std::vector<int32_t> next;
  while (word.size() > 1) {
    const detail::MergeTable::Merge *best = nullptr;
    int32_t left = 0, right = 0;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      const detail::MergeTable::Merge *merge = merges_.find(word[i], word[i + 1]);
      if (merge && (!best || merge->rank < best->rank)) {
        best = merge;
        left = word[i];
        right = word[i + 1];
      }
    }
    if (!best)
      break;
    next.clear();
    for (size_t i = 0; i < word.size();) {
      if (word[i] == left && i + 1 < word.size() && word[i + 1] == right) {
        next.push_back(best->result);
        i += 2;
      } else {
        next.push_back(word[i++]);
      }
    }
    word.swap(next);
  }
  out.insert(out.end(), word.begin(), word.end());
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  if (options_.split == detail::ByteLevelSplit::Gpt2) {
    for (std::string_view piece : splitGpt2Pretokens(text))
      encodePiece(piece, ids);
    return ids;
  }
  for (std::string_view piece :
       splitLlama3Pretokens(text, options_.split == detail::ByteLevelSplit::Llama3 ? 3 : 1))
    encodePiece(piece, ids);
  return ids;
}

bool BpeTokenizer::decode(std::span<const int32_t> ids, std::string *text,
                          std::string *error) const {
  std::string out;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocabSize() || !present_[id])
      return fail(error, "token id " + std::to_string(id) + " is not in the GPT-2 vocabulary (" +
                             std::to_string(vocabSize()) + " ids)");
    out += tokenBytes_[id];
  }
  *text = std::move(out);
  return true;
}

} // namespace

std::vector<std::string_view> splitGpt2Pretokens(std::string_view text) {
  std::vector<std::string_view> pieces;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = matchEnd(text, pos);
    pieces.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return pieces;
}

namespace detail {

std::unique_ptr<Tokenizer> openByteLevelBpe(const nlohmann::json &vocab,
                                            const std::vector<MergePair> &merges,
                                            const ByteLevelOptions &options,
                                            const std::string &where, std::string *error) {
  auto tokenizer = std::make_unique<BpeTokenizer>();
  if (!tokenizer->load(vocab, merges, where, error))
    return nullptr;
  tokenizer->setOptions(options);
  return tokenizer;
}

} // namespace detail

std::vector<std::string_view> splitLlama3Pretokens(std::string_view text, int maxDigits) {
  std::vector<std::string_view> pieces;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = matchEndLlama3(text, pos, maxDigits);
    pieces.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return pieces;
}

std::unique_ptr<Tokenizer> openBpeTokenizer(const std::string &encoderJsonPath,
                                            const std::string &vocabBpePath, std::string *error) {
  auto tokenizer = std::make_unique<BpeTokenizer>();
  if (!tokenizer->load(encoderJsonPath, vocabBpePath, error))
    return nullptr;
  return tokenizer;
}

} // namespace tmr
