//===- wordpiece_tokenizer.cpp - BERT's WordPiece -------------------------===//
//
// The algorithm of google-research/bert tokenization.py as Hugging Face's
// BertTokenizer runs it:
//   0. special tokens ([CLS], [SEP], [PAD], [MASK], the unknown token) found
//      verbatim in the text are kept whole;
//   1. basic tokenization: drop NUL, U+FFFD and category-C characters, turn
//      whitespace into spaces, put spaces around CJK ideographs, split on
//      whitespace, lowercase and/or strip accents (NFD minus Mn), then split
//      every punctuation character off;
//   2. WordPiece: per word, greedily the longest vocabulary prefix, then the
//      longest "##"-prefixed continuation, and so on; a word that cannot be
//      spelled this way (or is longer than maxCharsPerWord) is one [UNK].
// Approximations, documented: Python's str.lower() applies the final-sigma
// rule with the full case-ignorable context, here a capital sigma after a
// letter and before a non-letter becomes final; Hugging Face's NFC step before
// splitting (which only matters for cased models fed decomposed accents) is
// not done; malformed UTF-8 bytes are dropped, like U+FFFD.
//
//===----------------------------------------------------------------------===//
#include "runtime/tokenizer.h"
#include "runtime/tokenizer_internal.h"
#include "runtime/unicode.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace tmr {
namespace {

using detail::fail;

bool isBertWhitespace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || unicode::isSpaceSeparator(c);
}

bool isBertControl(char32_t c) {
  return c != '\t' && c != '\n' && c != '\r' && unicode::isOther(c);
}

/// BERT counts every non-alphanumeric printable ASCII character as
/// punctuation ("$", "^", "`" are symbols in Unicode), then category P.
bool isBertPunctuation(char32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
      (c >= 123 && c <= 126))
    return true;
  return c >= 0x80 && unicode::isPunctuation(c);
}

/// The CJK Unified Ideograph blocks BERT's _is_chinese_char lists.
bool isCjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::string toUtf8(std::u32string_view chars) {
  std::string out;
  for (char32_t c : chars)
    unicode::appendUtf8(c, out);
  return out;
}

/// Python's str.lower() of a word, final sigma approximated (file comment).
std::u32string lowercase(std::u32string_view word) {
  std::u32string text;
  for (size_t i = 0; i < word.size(); ++i) {
    if (word[i] != U'\u03A3') {
      unicode::appendLower(word[i], text);
      continue;
    }
    bool afterLetter = i > 0 && unicode::isLetter(word[i - 1]);
    bool beforeLetter = i + 1 < word.size() && unicode::isLetter(word[i + 1]);
    text += afterLetter && !beforeLetter ? U'\u03C2' : U'\u03C3';
  }
  return text;
}

/// Replaces every occurrence of `from` in `text` with `to`, left to right.
void replaceAll(std::string &text, std::string_view from, std::string_view to) {
  for (size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size())
    text.replace(pos, from.size(), to);
}

class WordPieceTokenizer final : public detail::TokenVocabulary {
public:
  explicit WordPieceTokenizer(WordPieceOptions options) : options_(std::move(options)) {}
  bool load(const std::string &path, std::string *error);
  bool load(std::vector<std::string> tokens, const std::string &where, std::string *error);

  std::string_view kind() const override { return "wordpiece"; }
  std::vector<int32_t> encode(std::string_view text) const override;
  bool decode(std::span<const int32_t> ids, std::string *text, std::string *error) const override;

private:
  std::vector<std::u32string> basicTokenize(std::string_view text) const;
  void normalizeWord(std::u32string_view word, std::vector<std::u32string> &out) const;
  void wordPiece(const std::u32string &word, std::vector<int32_t> &out) const;

  WordPieceOptions options_;
  std::vector<std::string> specials_;            ///< kept whole when found in text
  int32_t unknownId_ = 0;
};

bool WordPieceTokenizer::load(const std::string &path, std::string *error) {
  std::string contents;
  if (!detail::readWholeFile(path, &contents, error))
    return false;
  std::vector<std::string> tokens;
  for (size_t start = 0; start < contents.size();) {
    size_t newline = contents.find('\n', start);
    size_t end = newline == std::string::npos ? contents.size() : newline;
    std::string token = contents.substr(start, end - start);
    start = end + 1;
    if (!token.empty() && token.back() == '\r')
      token.pop_back();
    tokens.push_back(std::move(token));
    if (tokens.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
      return fail(error, path + ": more than 2^31 - 1 tokens");
  }
  return load(std::move(tokens), path, error);
}

bool WordPieceTokenizer::load(std::vector<std::string> tokens, const std::string &path,
                              std::string *error) {
  for (std::string &token : tokens) {
    ids_[token] = static_cast<int32_t>(tokens_.size());
    tokens_.push_back(std::move(token));
  }
  if (tokens_.empty())
    return fail(error, path + ": the vocabulary is empty");
  auto unknown = ids_.find(options_.unknownToken);
  if (unknown == ids_.end())
    return fail(error, path + ": the unknown token \"" + options_.unknownToken +
                           "\" is not in the vocabulary");
  unknownId_ = unknown->second;
  for (std::string special : {options_.unknownToken, std::string("[CLS]"), std::string("[SEP]"),
                              std::string("[PAD]"), std::string("[MASK]")})
    if (!special.empty() && ids_.count(special) &&
        std::find(specials_.begin(), specials_.end(), special) == specials_.end())
      specials_.push_back(special);
  return true;
}

void WordPieceTokenizer::normalizeWord(std::u32string_view word,
                                       std::vector<std::u32string> &out) const {
  std::u32string text = options_.lowercase ? lowercase(word) : std::u32string(word);
  if (options_.stripAccents.value_or(options_.lowercase)) {
    std::u32string stripped;
    for (char32_t c : text)
      unicode::appendStripped(c, stripped);
    text.swap(stripped);
  }
  std::u32string current;
  for (char32_t c : text) {
    if (isBertPunctuation(c)) {
      if (!current.empty())
        out.push_back(std::move(current));
      current.clear();
      out.push_back(std::u32string(1, c));
    } else {
      current += c;
    }
  }
  if (!current.empty())
    out.push_back(std::move(current));
}

std::vector<std::u32string> WordPieceTokenizer::basicTokenize(std::string_view text) const {
  std::u32string cleaned;
  for (size_t pos = 0; pos < text.size();) {
    unicode::Utf8Unit unit = unicode::decodeUtf8(text, pos);
    pos += unit.length;
    char32_t c = unit.codePoint;
    if (!unit.valid || c == 0 || c == 0xFFFD || isBertControl(c))
      continue;
    if (isBertWhitespace(c)) {
      cleaned += U' ';
    } else if (options_.splitCjk && isCjk(c)) {
      cleaned += U' ';
      cleaned += c;
      cleaned += U' ';
    } else {
      cleaned += c;
    }
  }
  // Python's str.split(): after cleaning, the only whitespace left besides
  // the space is the line and paragraph separators.
  std::vector<std::u32string> words;
  size_t start = 0;
  for (size_t i = 0; i <= cleaned.size(); ++i) {
    if (i < cleaned.size() && cleaned[i] != U' ' && cleaned[i] != U'\u2028' &&
        cleaned[i] != U'\u2029')
      continue;
    if (i > start)
      normalizeWord(std::u32string_view(cleaned).substr(start, i - start), words);
    start = i + 1;
  }
  return words;
}

void WordPieceTokenizer::wordPiece(const std::u32string &word, std::vector<int32_t> &out) const {
  if (word.size() > options_.maxCharsPerWord) {
    out.push_back(unknownId_);
    return;
  }
  std::vector<int32_t> pieces;
  for (size_t start = 0; start < word.size();) {
    size_t end = word.size();
    std::optional<int32_t> found;
    for (; end > start; --end) {
      std::string piece =
          (start > 0 ? "##" : "") + toUtf8(std::u32string_view(word).substr(start, end - start));
      auto it = ids_.find(piece);
      if (it != ids_.end()) {
        found = it->second;
        break;
      }
    }
    if (!found) {
      out.push_back(unknownId_);
      return;
    }
    pieces.push_back(*found);
    start = end;
  }
  out.insert(out.end(), pieces.begin(), pieces.end());
}

std::vector<int32_t> WordPieceTokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  auto encodeSegment = [&](std::string_view segment) {
    for (const std::u32string &word : basicTokenize(segment))
      wordPiece(word, ids);
  };
  size_t segmentStart = 0;
  for (size_t pos = 0; pos < text.size();) {
    // The longest special token starting here, if any.
    const std::string *match = nullptr;
    for (const std::string &special : specials_)
      if (text.substr(pos).starts_with(special) && (!match || special.size() > match->size()))
        match = &special;
    if (!match) {
      ++pos;
      continue;
    }
    encodeSegment(text.substr(segmentStart, pos - segmentStart));
    ids.push_back(ids_.at(*match));
    pos += match->size();
    segmentStart = pos;
  }
  encodeSegment(text.substr(segmentStart));
  return ids;
}

bool WordPieceTokenizer::decode(std::span<const int32_t> ids, std::string *text,
                                std::string *error) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    int32_t id = ids[i];
    if (id < 0 || id >= vocabSize())
      return fail(error, "token id " + std::to_string(id) +
                             " is not in the WordPiece vocabulary (" + std::to_string(vocabSize()) +
                             " ids)");
    if (i > 0)
      out += ' ';
    out += tokens_[id];
  }
  // convert_tokens_to_string, then clean_up_tokenization.
  replaceAll(out, " ##", "");
  size_t first = out.find_first_not_of(" \t\n\r\f\v");
  size_t last = out.find_last_not_of(" \t\n\r\f\v");
  out = first == std::string::npos ? std::string() : out.substr(first, last - first + 1);
  if (options_.cleanUpSpaces) {
    for (auto [from, to] : {std::pair{" .", "."},
                            {" ?", "?"},
                            {" !", "!"},
                            {" ,", ","},
                            {" ' ", "'"},
                            {" n't", "n't"},
                            {" 'm", "'m"},
                            {" 's", "'s"},
                            {" 've", "'ve"},
                            {" 're", "'re"}})
      replaceAll(out, from, to);
  }
  *text = std::move(out);
  return true;
}

} // namespace

namespace detail {

std::unique_ptr<Tokenizer> openWordPiece(std::vector<std::string> tokens,
                                         const WordPieceOptions &options, const std::string &where,
                                         std::string *error) {
  auto tokenizer = std::make_unique<WordPieceTokenizer>(options);
  if (!tokenizer->load(std::move(tokens), where, error))
    return nullptr;
  return tokenizer;
}

} // namespace detail

std::unique_ptr<Tokenizer> openWordPieceTokenizer(const std::string &vocabTxtPath,
                                                  const WordPieceOptions &options,
                                                  std::string *error) {
  auto tokenizer = std::make_unique<WordPieceTokenizer>(options);
  if (!tokenizer->load(vocabTxtPath, error))
    return nullptr;
  return tokenizer;
}

} // namespace tmr
