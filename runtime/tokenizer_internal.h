//===- tokenizer_internal.h - Helpers shared by the tokenizers ---*- C++ -*-===//
//
// Not part of the runtime's interface; included by the tokenizer sources only.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include "runtime/tokenizer.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace tmr::detail {

/// The whole file at `path`; false + *error naming the path on failure.
bool readWholeFile(const std::string &path, std::string *contents, std::string *error);

/// Parses `contents`, the text of the JSON file `path`; false + *error giving
/// the line, column and byte offset of a syntax error and its cause (invalid
/// UTF-8, an unexpected end of input, ...), not just that the file is bad.
bool parseJson(const std::string &path, const std::string &contents, nlohmann::json *json,
               std::string *error);

/// A tokenizer whose tokens are strings with ids (WordPiece, SentencePiece
/// BPE): the lookups every such tokenizer answers the same way.
class TokenVocabulary : public Tokenizer {
public:
  int64_t vocabSize() const override { return static_cast<int64_t>(tokens_.size()); }
  std::optional<int32_t> tokenId(std::string_view token) const override {
    auto it = ids_.find(std::string(token));
    return it == ids_.end() ? std::nullopt : std::optional<int32_t>(it->second);
  }

protected:
  std::vector<std::string> tokens_;              ///< id -> token
  std::unordered_map<std::string, int32_t> ids_; ///< token -> id
};

/// One BPE merge rule: `left` and `right` become one symbol.
struct MergePair {
  std::string left, right;
};

/// BPE merge rules, by the ids of the two symbols each joins.
class MergeTable {
public:
  struct Merge {
    int32_t rank;
    int32_t result; ///< the id of left + right
  };
  /// left + right -> their concatenation, all three tokens of `ids`. A
  /// repeated pair keeps its later rank, as encoder.py's dict(zip(merges,
  /// ranks)) and the tokenizers library's map do. False + *error (`where`,
  /// then the token missing from the vocabulary).
  bool add(const std::string &left, const std::string &right, int32_t rank,
           const std::unordered_map<std::string, int32_t> &ids, const std::string &where,
           std::string *error);
  /// The merge of symbol `a` followed by `b`, or null.
  const Merge *find(int32_t a, int32_t b) const {
    auto it = merges_.find(key(a, b));
    return it == merges_.end() ? nullptr : &it->second;
  }

private:
  static uint64_t key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  std::unordered_map<uint64_t, Merge> merges_;
};

/// A vocabulary entry's id (token -> id in encoder.json or a tokenizer.json):
/// an integer in [0, 2^31 - 2]; false + *error naming `token` otherwise.
bool readTokenId(const nlohmann::json &value, const std::string &token, const std::string &where,
                 int32_t *id, std::string *error);

/// Where byte-level BPE cuts text before merging: GPT-2's regex, or Llama
/// 3's (its numbers in runs of at most 3 digits; Qwen2's: 1).
enum class ByteLevelSplit { Gpt2, Llama3, Qwen2 };

/// How a tokenizer.json's byte-level BPE treats text before merging.
struct ByteLevelOptions {
  ByteLevelSplit split = ByteLevelSplit::Gpt2;
  /// Llama 3's: a piece the vocabulary spells whole is that token, unmerged.
  bool ignoreMerges = false;
};

/// Byte-level BPE (tokenizer.h) from a tokenizer.json's vocabulary (token ->
/// id, tokens spelled in GPT-2's byte alphabet) and merges, in rank order.
/// `where` names the file in messages.
std::unique_ptr<Tokenizer> openByteLevelBpe(const nlohmann::json &vocab,
                                            const std::vector<MergePair> &merges,
                                            const ByteLevelOptions &options,
                                            const std::string &where, std::string *error);

/// WordPiece from its tokens in id order (a vocab.txt's lines, or a
/// tokenizer.json's vocabulary sorted by id).
std::unique_ptr<Tokenizer> openWordPiece(std::vector<std::string> tokens,
                                         const WordPieceOptions &options, const std::string &where,
                                         std::string *error);

/// How a SentencePiece-style BPE (Llama 2, Mistral) cuts and spells text.
struct SentencePieceOptions {
  bool byteFallback = true; ///< unknown characters as <0xXX> byte tokens
  bool fuseUnknown = true;  ///< consecutive unknown characters as one
  std::string unknownToken; ///< "" for none
  /// Where "▁" is put in front of a part of the text: the Prepend
  /// normalizer's Always (every part, even one that starts with a space),
  /// Metaspace's always / first (the part that begins the text) / never,
  /// which add it only to a part that does not start with one.
  enum class Prepend { Never, Always, First } prepend = Prepend::Always;
  bool metaspace = false;  ///< Metaspace's rule (else the Prepend normalizer's)
  bool splitWords = false; ///< Metaspace's split: a word at each "▁"
};

/// SentencePiece-style BPE (sentencepiece_bpe.cpp) from a tokenizer.json's
/// vocabulary and merges.
std::unique_ptr<Tokenizer> openSentencePieceBpe(const nlohmann::json &vocab,
                                                const std::vector<MergePair> &merges,
                                                const SentencePieceOptions &options,
                                                const std::string &where, std::string *error);

/// A Hugging Face tokenizer.json (hf_tokenizer.cpp).
std::unique_ptr<Tokenizer> openTokenizerJson(const std::string &path, std::string *error);

/// Sets *error (when non-null) and returns false, for one-line error returns.
inline bool fail(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return false;
}

} // namespace tmr::detail
