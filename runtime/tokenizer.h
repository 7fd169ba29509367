//===- tokenizer.h - Text <-> token ids for --prompt and printing -*- C++ -*-===//
//
// Three tokenizers cover the supported models: GPT-2's byte-level BPE,
// BERT's WordPiece and SentencePiece-style BPE (Llama 2, Mistral). Each loads
// the files its reference implementation ships, so a model's own tokenizer
// directory works unchanged:
//
//   tokenizer.json  Hugging Face's `tokenizers` format (hf_tokenizer.cpp):
//               any of the three, with its added tokens; preferred when present
//   GPT-2 BPE   encoder.json (token -> id) + vocab.bpe (merges, by rank)
//   WordPiece   vocab.txt (one token a line, id = line number) and, optional,
//               tokenizer_config.json (do_lower_case, strip_accents,
//               tokenize_chinese_chars, unk_token,
//               clean_up_tokenization_spaces; Hugging Face's keys/defaults)
//
// Neither encode() adds special tokens ([CLS]/[SEP], <|endoftext|>): callers
// that want them look them up with tokenId().
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tmr {

/// A loaded tokenizer. Immutable after loading, so one instance may be used
/// from several threads at once.
class Tokenizer {
public:
  virtual ~Tokenizer() = default;

  /// Loads the tokenizer in `dir`: its tokenizer.json when it has one, else
  /// GPT-2 BPE when it holds encoder.json and vocab.bpe, WordPiece when it
  /// holds vocab.txt. Null + *error (naming the
  /// file, and the line or entry when the file is malformed) otherwise.
  static std::unique_ptr<Tokenizer> open(const std::string &dir, std::string *error);
  /// Every file open() may read in its directory (an output must not be one).
  static constexpr const char *kFileNames[] = {"tokenizer.json", "encoder.json", "vocab.bpe",
                                               "vocab.txt", "tokenizer_config.json"};

  /// "gpt2-bpe", "wordpiece" or "sentencepiece-bpe".
  virtual std::string_view kind() const = 0;

  /// Token ids for `text` (UTF-8). Never fails: BPE encodes any byte string
  /// (malformed UTF-8 included) losslessly; WordPiece maps what its vocabulary
  /// cannot spell to the unknown token.
  virtual std::vector<int32_t> encode(std::string_view text) const = 0;

  /// `ids` (one text's encode()) as the model reads them: with the special
  /// tokens a tokenizer.json's post-processor puts around them ([CLS] ...
  /// [SEP] for BERT, <s> ... for Llama 2); the other tokenizers add none.
  virtual std::vector<int32_t> addSpecialTokens(std::vector<int32_t> ids) const { return ids; }

  /// encode() of a part of a longer text, cut where a tokenizer.json's added
  /// tokens were matched; `atStart`: the part begins the text, which
  /// SentencePiece's Metaspace (prepend_scheme "first") asks.
  virtual std::vector<int32_t> encodePart(std::string_view text, bool atStart) const {
    (void)atStart;
    return encode(text);
  }

  /// The text of `ids` into *text. False + *error (naming the id) when an id
  /// is outside [0, vocabSize()), e.g. a model whose vocabulary was padded
  /// beyond the tokenizer's. BPE returns the exact bytes, so decoding a
  /// sequence piecewise and concatenating equals decoding it whole, even when
  /// a UTF-8 character spans tokens (the pieces alone may be partial UTF-8).
  virtual bool decode(std::span<const int32_t> ids, std::string *text,
                      std::string *error) const = 0;

  /// decode() of the ids this tokenizer has text for: an id it lacks (a
  /// model's vocabulary padded beyond the tokenizer's, as nanoGPT pads
  /// GPT-2's 50257 to 50304: ids a model may still generate or be given) is
  /// left out, as Hugging Face's decoders skip ids they do not know, and
  /// counted in *dropped. For a generated or echoed text, where the ids are
  /// the model's to choose and the reply carries them too.
  std::string decodeKnown(std::span<const int32_t> ids, size_t *dropped = nullptr) const;

  /// Number of ids (highest id + 1).
  virtual int64_t vocabSize() const = 0;

  /// The id of a vocabulary entry spelled exactly `token` (e.g. "[CLS]",
  /// "<|endoftext|>"), if any.
  virtual std::optional<int32_t> tokenId(std::string_view token) const = 0;
};

/// How WordPiece normalizes text; defaults are Hugging Face BertTokenizer's.
struct WordPieceOptions {
  bool lowercase = true;              ///< do_lower_case
  std::optional<bool> stripAccents;   ///< strip_accents; unset: same as lowercase
  bool splitCjk = true;               ///< tokenize_chinese_chars
  std::string unknownToken = "[UNK]"; ///< unk_token
  bool cleanUpSpaces = true;          ///< clean_up_tokenization_spaces in decode
  size_t maxCharsPerWord = 100;       ///< longer words become the unknown token
};

/// GPT-2 byte-level BPE from its two files.
std::unique_ptr<Tokenizer> openBpeTokenizer(const std::string &encoderJsonPath,
                                            const std::string &vocabBpePath, std::string *error);

/// WordPiece from a vocab.txt and explicit options (Tokenizer::open reads the
/// options from tokenizer_config.json instead).
std::unique_ptr<Tokenizer> openWordPieceTokenizer(const std::string &vocabTxtPath,
                                                  const WordPieceOptions &options,
                                                  std::string *error);

/// GPT-2's pre-tokenizer: `text` cut where the regex
///   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
/// matches, exactly as the reference (JavaScript, Unicode from Node's ICU)
/// evaluates it. The pieces are consecutive and cover `text`. A byte that is
/// not part of well-formed UTF-8 counts as one character of the
/// [^\s\p{L}\p{N}] class. Exposed for tests.
std::vector<std::string_view> splitGpt2Pretokens(std::string_view text);

/// Llama 3's pre-tokenizer (its tokenizer.json's Split regex):
///   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
///    ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
/// with numbers in runs of at most `maxDigits` (Qwen2's regex: 1), classes as
/// splitGpt2Pretokens has them. Exposed for tests.
std::vector<std::string_view> splitLlama3Pretokens(std::string_view text, int maxDigits = 3);

} // namespace tmr
