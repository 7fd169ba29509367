//===- sentencepiece_bpe.cpp - SentencePiece-style BPE (Llama 2, Mistral) --===//
//
// The tokenizer.json form of SentencePiece BPE models, as Hugging Face's
// `tokenizers` runs them:
//   1. spaces become U+2581 ("▁") and one "▁" is put in front of the text
//      (the Prepend + Replace normalizers, or the Metaspace pre-tokenizer);
//   2. with Metaspace's `split`, the text is cut before each "▁"; otherwise
//      it is one word;
//   3. each character is a symbol: its vocabulary id, or with byte fallback
//      one <0xXX> token per UTF-8 byte when the vocabulary lacks it (else
//      the unknown token, consecutive ones fused);
//   4. merges apply lowest rank first, the leftmost occurrence on a tie
//      (tokenizers' Word::merge_all), until none applies.
// Decoding reverses it: <0xXX> tokens are bytes, "▁" a space, and the space
// the normalizer put in front is taken off.
//
//===----------------------------------------------------------------------===//
#include "runtime/tokenizer_internal.h"
#include "runtime/unicode.h"

#include <array>
#include <cstdio>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>

namespace tmr {

namespace {

using detail::fail;

constexpr std::string_view kSpace = "\xe2\x96\x81"; // U+2581, "▁"

class SentencePieceBpe final : public detail::TokenVocabulary {
public:
  explicit SentencePieceBpe(detail::SentencePieceOptions options) : options_(std::move(options)) {}
  bool load(const nlohmann::json &vocab, const std::vector<detail::MergePair> &merges,
            const std::string &where, std::string *error);

  std::string_view kind() const override { return "sentencepiece-bpe"; }
  std::vector<int32_t> encode(std::string_view text) const override {
    return encodePart(text, /*atStart=*/true);
  }
  std::vector<int32_t> encodePart(std::string_view text, bool atStart) const override;
  bool decode(std::span<const int32_t> ids, std::string *text, std::string *error) const override;

private:
  void encodeWord(std::string_view word, std::vector<int32_t> &out) const;

  detail::SentencePieceOptions options_;
  // tokens_: "" for an id no piece has.
  std::vector<int16_t> byteOf_; ///< id -> the byte of a <0xXX> token, or -1
  std::array<int32_t, 256> byteIds_{};
  detail::MergeTable merges_;
  int32_t unknownId_ = -1;
};

bool SentencePieceBpe::load(const nlohmann::json &vocab,
                            const std::vector<detail::MergePair> &merges, const std::string &where,
                            std::string *error) {
  if (!vocab.is_object())
    return fail(error, where + ": \"model\".\"vocab\" is not an object of token -> id");
  for (const auto &[token, value] : vocab.items()) {
    int32_t id = 0;
    if (!detail::readTokenId(value, token, where, &id, error))
      return false;
    if (static_cast<size_t>(id) >= tokens_.size()) {
      tokens_.resize(id + 1);
      byteOf_.resize(id + 1, -1);
    }
    tokens_[id] = token;
    ids_[token] = id;
    // "<0x0A>": the byte fallback token of byte 0x0A.
    if (token.size() == 6 && token.starts_with("<0x") && token.back() == '>')
      byteOf_[id] = static_cast<int16_t>(std::stoi(token.substr(3, 2), nullptr, 16));
  }
  if (!options_.unknownToken.empty()) {
    auto it = ids_.find(options_.unknownToken);
    if (it == ids_.end())
      return fail(error, where + ": the unknown token \"" + options_.unknownToken +
                             "\" is not in the vocabulary");
    unknownId_ = it->second;
  }
  for (int b = 0; b < 256; ++b) {
    char name[7];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    auto it = ids_.find(name);
    if (options_.byteFallback && it == ids_.end())
      return fail(error, where + ": byte_fallback is on, but the vocabulary has no \"" +
                             std::string(name) + "\"");
    byteIds_[b] = it == ids_.end() ? -1 : it->second;
  }
  for (size_t rank = 0; rank < merges.size(); ++rank)
    if (!merges_.add(merges[rank].left, merges[rank].right, static_cast<int32_t>(rank), ids_,
                     where + ": merge " + std::to_string(rank) + ": ", error))
      return false;
  return true;
}

void SentencePieceBpe::encodeWord(std::string_view word, std::vector<int32_t> &out) const {
  // Symbols in a doubly linked list; merged ones are marked dead.
  std::vector<int32_t> symbols;
  for (size_t pos = 0; pos < word.size();) {
    unicode::Utf8Unit unit = unicode::decodeUtf8(word, pos);
    std::string character(word.substr(pos, unit.length));
    pos += unit.length;
    if (auto it = ids_.find(character); it != ids_.end()) {
      symbols.push_back(it->second);
    } else if (options_.byteFallback) {
      for (unsigned char byte : character)
        symbols.push_back(byteIds_[byte]);
    } else if (unknownId_ >= 0 &&
               !(options_.fuseUnknown && !symbols.empty() && symbols.back() == unknownId_)) {
      symbols.push_back(unknownId_);
    }
  }
  const size_t n = symbols.size();
  std::vector<int64_t> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (size_t i = 0; i < n; ++i) {
    prev[i] = static_cast<int64_t>(i) - 1;
    next[i] = i + 1 < n ? static_cast<int64_t>(i + 1) : -1;
  }
  // (rank, left position): the lowest rank first, the leftmost on a tie.
  using Candidate = std::pair<int32_t, int64_t>;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto consider = [&](int64_t left) {
    if (left < 0 || next[left] < 0)
      return;
    if (const detail::MergeTable::Merge *merge = merges_.find(symbols[left], symbols[next[left]]))
      queue.push({merge->rank, left});
  };
  for (size_t i = 0; i + 1 < n; ++i)
    consider(static_cast<int64_t>(i));
  while (!queue.empty()) {
    auto [rank, left] = queue.top();
    queue.pop();
    if (!alive[left] || next[left] < 0)
      continue;
    const detail::MergeTable::Merge *merge = merges_.find(symbols[left], symbols[next[left]]);
    // A candidate whose symbols changed since it was queued is stale.
    if (!merge || merge->rank != rank)
      continue;
    int64_t right = next[left];
    symbols[left] = merge->result;
    alive[right] = false;
    next[left] = next[right];
    if (next[right] >= 0)
      prev[next[right]] = left;
    consider(prev[left]);
    consider(left);
  }
  for (size_t i = 0; i < n; i = next[i] < 0 ? n : static_cast<size_t>(next[i]))
    out.push_back(symbols[i]);
}

std::vector<int32_t> SentencePieceBpe::encodePart(std::string_view text, bool atStart) const {
  std::vector<int32_t> ids;
  if (text.empty())
    return ids;
  using Prepend = detail::SentencePieceOptions::Prepend;
  std::string normalized;
  for (char c : text)
    normalized += c == ' ' ? std::string(kSpace) : std::string(1, c);
  bool prepend =
      options_.prepend == Prepend::Always || (options_.prepend == Prepend::First && atStart);
  // Metaspace adds "▁" only where there is none; the Prepend normalizer, run
  // before spaces are replaced, always does.
  if (options_.metaspace && normalized.compare(0, kSpace.size(), kSpace) == 0)
    prepend = false;
  if (prepend)
    normalized.insert(0, kSpace);
  if (!options_.splitWords) {
    encodeWord(normalized, ids);
    return ids;
  }
  // Metaspace's split: a word starts at each "▁".
  size_t start = 0;
  while (start < normalized.size()) {
    size_t end = normalized.find(kSpace, start + 1);
    if (end == std::string::npos)
      end = normalized.size();
    encodeWord(std::string_view(normalized).substr(start, end - start), ids);
    start = end;
  }
  return ids;
}

bool SentencePieceBpe::decode(std::span<const int32_t> ids, std::string *text,
                              std::string *error) const {
  std::string out;
  for (int32_t id : ids) {
    if (id < 0 || id >= vocabSize() || tokens_[id].empty())
      return fail(error, "token id " + std::to_string(id) + " is not in the vocabulary (" +
                             std::to_string(vocabSize()) + " ids)");
    if (byteOf_[id] >= 0) {
      out += static_cast<char>(byteOf_[id]);
      continue;
    }
    const std::string &piece = tokens_[id];
    for (size_t pos = 0; pos < piece.size();) {
      if (piece.compare(pos, kSpace.size(), kSpace) == 0) {
        out += ' ';
        pos += kSpace.size();
      } else {
        out += piece[pos++];
      }
    }
  }
  // The space the normalizer put in front of the text.
  if (options_.prepend != detail::SentencePieceOptions::Prepend::Never && !out.empty() &&
      out.front() == ' ')
    out.erase(0, 1);
  *text = std::move(out);
  return true;
}

} // namespace

namespace detail {

std::unique_ptr<Tokenizer> openSentencePieceBpe(const nlohmann::json &vocab,
                                                const std::vector<MergePair> &merges,
                                                const SentencePieceOptions &options,
                                                const std::string &where, std::string *error) {
  auto tokenizer = std::make_unique<SentencePieceBpe>(options);
  if (!tokenizer->load(vocab, merges, where, error))
    return nullptr;
  return tokenizer;
}

} // namespace detail

} // namespace tmr
