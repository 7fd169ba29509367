//===- hf_tokenizer.cpp - Hugging Face tokenizer.json -----------------------===//
//
// The format the `tokenizers` library serializes (tokenizer.json): a model
// (BPE, WordPiece, ...) with the normalizer, pre-tokenizer and decoder around
// it, and the added tokens matched before any of them. This reads the
// combinations the supported checkpoints use, each onto a tokenizer tmc has:
//   byte-level BPE   (GPT-2)    pre_tokenizer ByteLevel, decoder ByteLevel;
//                    (Llama 3, Qwen2) Split on their regex, then ByteLevel;
//                    Qwen2's NFC normalizer
//   WordPiece        (BERT)     normalizer BertNormalizer, BertPreTokenizer
//   SentencePiece BPE (Llama 2, Mistral)  byte_fallback, with Prepend and
//                    Replace normalizers or the Metaspace pre-tokenizer
// and refuses any other, naming the field and its value: a tokenizer that
// splits text differently from its model's would give wrong ids silently.
//
//===----------------------------------------------------------------------===//
#include "runtime/tokenizer_internal.h"
#include "runtime/unicode.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace tmr {

namespace {

using detail::fail;
using Json = nlohmann::json;

constexpr const char *kSpace = "\xe2\x96\x81"; // "▁"

/// object[key], or null when it is absent: a const object's operator[] must
/// not be asked for a missing key.
const Json &field(const Json &object, const char *key) {
  static const Json kNull;
  if (!object.is_object())
    return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

/// The "type" of a component, "null" for none.
std::string typeOf(const Json &component) {
  if (component.is_null())
    return "null";
  if (component.is_object() && component.contains("type") && component["type"].is_string())
    return component["type"].get<std::string>();
  return "?";
}

/// Merges as the tokenizers library writes them: "a b" strings (before 0.20)
/// or ["a", "b"] pairs.
bool readMerges(const Json &model, const std::string &path, std::vector<detail::MergePair> *out,
                std::string *error) {
  if (!model.contains("merges"))
    return true;
  const Json &merges = model["merges"];
  if (!merges.is_array())
    return fail(error, path + ": \"model\".\"merges\" is not a list");
  for (size_t i = 0; i < merges.size(); ++i) {
    const Json &merge = merges[i];
    std::string where = path + ": merge " + std::to_string(i);
    if (merge.is_string()) {
      std::string text = merge.get<std::string>();
      size_t space = text.find(' ');
      if (space == std::string::npos || space == 0 || space + 1 == text.size())
        return fail(error, where + " is not two tokens separated by a space");
      out->push_back({text.substr(0, space), text.substr(space + 1)});
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      out->push_back({merge[0].get<std::string>(), merge[1].get<std::string>()});
    } else {
      return fail(error, where + " is neither \"a b\" nor [\"a\", \"b\"]");
    }
  }
  return true;
}

/// The parts of a Sequence component, or the component alone.
std::vector<Json> parts(const Json &component, const char *listKey) {
  if (typeOf(component) == "Sequence" && component.contains(listKey) &&
      component[listKey].is_array())
    return component[listKey].get<std::vector<Json>>();
  if (component.is_null())
    return {};
  return {component};
}

bool boolField(const Json &object, const char *key, bool fallback) {
  return object.contains(key) && object[key].is_boolean() ? object[key].get<bool>() : fallback;
}

std::string stringField(const Json &object, const char *key, const std::string &fallback) {
  return object.contains(key) && object[key].is_string() ? object[key].get<std::string>()
                                                         : fallback;
}

std::unique_ptr<Tokenizer> openWordPieceJson(const Json &json, const std::string &path,
                                             std::string *error) {
  const Json &model = json["model"];
  const Json &normalizer = json["normalizer"];
  if (typeOf(normalizer) != "BertNormalizer") {
    fail(error, path + ": WordPiece with normalizer " + typeOf(normalizer) +
                    " is not supported (tmc's WordPiece normalizes as BertNormalizer)");
    return nullptr;
  }
  if (typeOf(json["pre_tokenizer"]) != "BertPreTokenizer") {
    fail(error, path + ": WordPiece with pre_tokenizer " + typeOf(json["pre_tokenizer"]) +
                    " is not supported (tmc's WordPiece splits as BertPreTokenizer)");
    return nullptr;
  }
  if (stringField(model, "continuing_subword_prefix", "##") != "##") {
    fail(error, path + ": WordPiece with continuing_subword_prefix \"" +
                    stringField(model, "continuing_subword_prefix", "") +
                    "\" is not supported (\"##\" is)");
    return nullptr;
  }
  WordPieceOptions options;
  options.lowercase = boolField(normalizer, "lowercase", true);
  if (normalizer.contains("strip_accents") && normalizer["strip_accents"].is_boolean())
    options.stripAccents = normalizer["strip_accents"].get<bool>();
  options.splitCjk = boolField(normalizer, "handle_chinese_chars", true);
  options.unknownToken = stringField(model, "unk_token", "[UNK]");
  if (model.contains("max_input_chars_per_word") &&
      model["max_input_chars_per_word"].is_number_unsigned())
    options.maxCharsPerWord = model["max_input_chars_per_word"].get<size_t>();
  options.cleanUpSpaces = boolField(json["decoder"], "cleanup", true);

  const Json &vocab = field(model, "vocab");
  if (!vocab.is_object()) {
    fail(error, path + ": \"model\".\"vocab\" is not an object of token -> id");
    return nullptr;
  }
  // Ids must be 0..n-1, each once, as vocab.txt's line numbers are.
  std::vector<std::string> tokens(vocab.size());
  std::vector<bool> seen(vocab.size(), false);
  for (const auto &[token, value] : vocab.items()) {
    if (!value.is_number_unsigned() || value.get<uint64_t>() >= vocab.size() ||
        seen[value.get<size_t>()]) {
      fail(error, path + ": WordPiece ids must be 0.." + std::to_string(vocab.size() - 1) +
                      ", each once; token \"" + token + "\" has " + value.dump());
      return nullptr;
    }
    seen[value.get<size_t>()] = true;
    tokens[value.get<size_t>()] = token;
  }
  return detail::openWordPiece(std::move(tokens), options, path, error);
}

/// `*nfc` says whether the text is to be put in normalization form C first
/// (WithAddedTokens does it, around the added tokens).
std::unique_ptr<Tokenizer> openBpeJson(const Json &json, const std::string &path, bool *nfc,
                                       std::string *error) {
  const Json &model = json["model"];
  std::vector<detail::MergePair> merges;
  if (!readMerges(model, path, &merges, error))
    return nullptr;
  const Json &pre = json["pre_tokenizer"];
  const Json &normalizer = json["normalizer"];
  detail::ByteLevelOptions byteLevel;
  byteLevel.ignoreMerges = boolField(model, "ignore_merges", false);
  if (typeOf(pre) == "ByteLevel" || typeOf(pre) == "Sequence") {
    // None (GPT-2, Llama 3) or NFC (Qwen2), alone or as a one-part Sequence.
    std::vector<Json> steps = parts(normalizer, "normalizers");
    if (steps.size() > 1 || (steps.size() == 1 && typeOf(steps[0]) != "NFC")) {
      fail(error, path + ": byte-level BPE with normalizer " + normalizer.dump().substr(0, 160) +
                      " is not supported (none, or NFC as Qwen2's)");
      return nullptr;
    }
    *nfc = steps.size() == 1;
  }
  if (typeOf(pre) == "ByteLevel") {
    if (boolField(pre, "add_prefix_space", false) || !boolField(pre, "use_regex", true)) {
      fail(error, path + ": a ByteLevel pre_tokenizer with add_prefix_space true or use_regex "
                         "false is not supported (GPT-2's splits with its regex, adding no space)");
      return nullptr;
    }
    return detail::openByteLevelBpe(field(model, "vocab"), merges, byteLevel, path, error);
  }
  if (typeOf(pre) == "Sequence") {
    // Llama 3 and Qwen2: Split on their own regex, then ByteLevel without
    // GPT-2's regex. tmc matches these two regexes by hand (bpe_tokenizer.cpp).
    static const std::string kLlama3 =
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    static const std::string kQwen2 =
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    std::vector<Json> steps = parts(pre, "pretokenizers");
    std::string pattern;
    bool shaped = steps.size() == 2 && typeOf(steps[0]) == "Split" &&
                  typeOf(steps[1]) == "ByteLevel" && !boolField(steps[1], "use_regex", true) &&
                  !boolField(steps[1], "add_prefix_space", false) &&
                  stringField(steps[0], "behavior", "") == "Isolated" &&
                  !boolField(steps[0], "invert", false) && steps[0].contains("pattern") &&
                  steps[0]["pattern"].is_object();
    if (shaped)
      pattern = stringField(steps[0]["pattern"], "Regex", "");
    if (!shaped || (pattern != kLlama3 && pattern != kQwen2)) {
      fail(error, path + ": byte-level BPE with this pre_tokenizer Sequence (" +
                      pre.dump().substr(0, 160) +
                      ") is not supported: GPT-2's ByteLevel, and Llama 3's and Qwen2's "
                      "Split + ByteLevel are");
      return nullptr;
    }
    byteLevel.split =
        pattern == kLlama3 ? detail::ByteLevelSplit::Llama3 : detail::ByteLevelSplit::Qwen2;
    return detail::openByteLevelBpe(field(model, "vocab"), merges, byteLevel, path, error);
  }
  if (!boolField(model, "byte_fallback", false)) {
    fail(error, path + ": BPE with pre_tokenizer " + typeOf(pre) +
                    " and no byte_fallback is not supported (byte-level BPE as GPT-2's, or "
                    "SentencePiece BPE with byte_fallback as Llama 2's)");
    return nullptr;
  }
  detail::SentencePieceOptions options;
  options.byteFallback = true;
  options.fuseUnknown = boolField(model, "fuse_unk", false);
  options.unknownToken = stringField(model, "unk_token", "");
  if (typeOf(pre) == "Metaspace") {
    if (stringField(pre, "replacement", kSpace) != kSpace) {
      fail(error, path + ": a Metaspace replacement other than \"\xe2\x96\x81\" is not "
                         "supported");
      return nullptr;
    }
    // prepend_scheme (first, always, never), or the older add_prefix_space.
    std::string scheme = stringField(pre, "prepend_scheme",
                                     boolField(pre, "add_prefix_space", true) ? "always" : "never");
    using Prepend = detail::SentencePieceOptions::Prepend;
    if (scheme != "first" && scheme != "always" && scheme != "never") {
      fail(error, path + ": Metaspace prepend_scheme \"" + scheme +
                      "\" is not one of first, always, never");
      return nullptr;
    }
    options.prepend = scheme == "first"    ? Prepend::First
                      : scheme == "always" ? Prepend::Always
                                           : Prepend::Never;
    options.metaspace = true;
    options.splitWords = boolField(pre, "split", true);
    if (!normalizer.is_null()) {
      fail(error, path + ": SentencePiece BPE with both a Metaspace pre_tokenizer and normalizer " +
                      typeOf(normalizer) + " is not supported");
      return nullptr;
    }
    return detail::openSentencePieceBpe(field(model, "vocab"), merges, options, path, error);
  }
  if (!pre.is_null()) {
    fail(error, path + ": SentencePiece BPE with pre_tokenizer " + typeOf(pre) +
                    " is not supported (none, with Prepend and Replace normalizers, or "
                    "Metaspace)");
    return nullptr;
  }
  // Llama 2's: Prepend("▁") then Replace(" ", "▁").
  bool prepend = false, replace = false;
  for (const Json &part : parts(normalizer, "normalizers")) {
    std::string type = typeOf(part);
    if (type == "Prepend" && stringField(part, "prepend", "") == kSpace)
      prepend = true;
    else if (type == "Replace" && part.contains("pattern") && part["pattern"].is_object() &&
             stringField(part["pattern"], "String", "") == " " &&
             stringField(part, "content", "") == kSpace)
      replace = true;
    else {
      fail(error, path + ": SentencePiece BPE with normalizer " + type +
                      " is not supported (Prepend \"\xe2\x96\x81\" and Replace \" \" with "
                      "\"\xe2\x96\x81\" are)");
      return nullptr;
    }
  }
  if (!replace) {
    fail(error, path + ": SentencePiece BPE without a Replace of \" \" with \"\xe2\x96\x81\" "
                       "is not supported");
    return nullptr;
  }
  options.prepend = prepend ? detail::SentencePieceOptions::Prepend::Always
                            : detail::SentencePieceOptions::Prepend::Never;
  return detail::openSentencePieceBpe(field(model, "vocab"), merges, options, path, error);
}

/// The ids a post-processor puts before and after one text's.
struct SpecialTokens {
  std::vector<int32_t> before, after;
};

/// One "cls"/"sep" of BertProcessing and RobertaProcessing: ["[CLS]", 101].
bool readPair(const Json &pair, const std::string &where, std::vector<int32_t> *out,
              std::string *error) {
  if (!pair.is_array() || pair.size() != 2 || !pair[1].is_number_unsigned())
    return fail(error, where + " is not [\"token\", id]");
  out->push_back(pair[1].get<int32_t>());
  return true;
}

/// The post-processor's special tokens for a single text: TemplateProcessing
/// (its "single" template), BertProcessing and RobertaProcessing (cls, sep),
/// ByteLevel (none), or a Sequence of them.
bool readPostProcessor(const Json &post, const std::string &path, SpecialTokens *out,
                       std::string *error) {
  const std::string type = typeOf(post);
  const std::string where = path + ": post_processor " + type;
  if (type == "null" || type == "ByteLevel")
    return true;
  if (type == "Sequence") {
    for (const Json &part : parts(post, "processors"))
      if (!readPostProcessor(part, path, out, error))
        return false;
    return true;
  }
  if (type == "BertProcessing" || type == "RobertaProcessing")
    return readPair(post.value("cls", Json()), where + " \"cls\"", &out->before, error) &&
           readPair(post.value("sep", Json()), where + " \"sep\"", &out->after, error);
  if (type != "TemplateProcessing")
    return fail(error, where + " is not supported (TemplateProcessing, BertProcessing, "
                               "RobertaProcessing and ByteLevel are)");
  const Json &single = post.value("single", Json());
  const Json &specials = post.value("special_tokens", Json::object());
  if (!single.is_array())
    return fail(error, where + ": \"single\" is not a list");
  bool seenText = false;
  for (const Json &item : single) {
    if (item.is_object() && item.contains("Sequence")) {
      seenText = true;
      continue;
    }
    std::string name =
        item.is_object() && item.contains("SpecialToken") && item["SpecialToken"].is_object()
            ? stringField(item["SpecialToken"], "id", "")
            : "";
    const Json &special = specials.is_object() && specials.contains(name) ? specials[name] : Json();
    if (name.empty() || !special.is_object() || !special.contains("ids") ||
        !special["ids"].is_array())
      return fail(error, where + ": \"single\" item " + item.dump().substr(0, 80) +
                             " is neither a Sequence nor a SpecialToken of \"special_tokens\"");
    for (const Json &id : special["ids"]) {
      if (!id.is_number_unsigned())
        return fail(error, where + ": special token \"" + name + "\" has an id that is not one");
      (seenText ? out->after : out->before).push_back(id.get<int32_t>());
    }
  }
  return true;
}

/// An "added_tokens" entry.
struct AddedToken {
  std::string content;
  int32_t id = 0;
  /// Matched in the normalized text rather than in the text as given.
  bool normalized = false;
};

/// A tokenizer.json: its model's tokenizer, with the added tokens (special
/// tokens such as <s>, <|endoftext|>, [CLS]) matched in the text before the
/// model sees it and spelled as they are, and the post-processor's special
/// tokens for addSpecialTokens(). With an NFC normalizer (Qwen2's), the text
/// is cut as the tokenizers library cuts it: at the added tokens that are
/// not "normalized" first, then each part is normalized and cut at the
/// others, whose content is normalized too.
class WithAddedTokens final : public Tokenizer {
public:
  WithAddedTokens(std::unique_ptr<Tokenizer> inner, std::vector<AddedToken> added, bool nfc,
                  SpecialTokens specials)
      : inner_(std::move(inner)), nfc_(nfc), specials_(std::move(specials)) {
    for (const AddedToken &token : added)
      contentOf_[token.id] = token.content;
    // Longest first, so that "<|end|>" is not cut short by "<|e".
    std::stable_sort(added.begin(), added.end(), [](const auto &a, const auto &b) {
      return a.content.size() > b.content.size();
    });
    for (AddedToken &token : added) {
      if (nfc_ && token.normalized)
        normalizedTokens_.push_back({unicode::toNfc(token.content), token.id});
      else
        rawTokens_.push_back({std::move(token.content), token.id});
    }
  }
  std::string_view kind() const override { return inner_->kind(); }
  std::vector<int32_t> addSpecialTokens(std::vector<int32_t> ids) const override {
    ids.insert(ids.begin(), specials_.before.begin(), specials_.before.end());
    ids.insert(ids.end(), specials_.after.begin(), specials_.after.end());
    return ids;
  }
  std::vector<int32_t> encode(std::string_view text) const override {
    std::vector<int32_t> ids;
    cutAtAddedTokens(text, rawTokens_, ids, [&](std::string_view part, bool atStart) {
      if (!nfc_) {
        append(ids, inner_->encodePart(part, atStart));
        return;
      }
      std::string normalized = unicode::toNfc(part);
      cutAtAddedTokens(normalized, normalizedTokens_, ids,
                       [&](std::string_view piece, bool pieceAtStart) {
                         append(ids, inner_->encodePart(piece, atStart && pieceAtStart));
                       });
    });
    return ids;
  }
  bool decode(std::span<const int32_t> ids, std::string *text, std::string *error) const override {
    // The model's vocabulary usually spells its added tokens too (<s>,
    // <|endoftext|>, [CLS]): then its decoder sees the whole sequence, as the
    // tokenizers library's does (a leading space is stripped once, not after
    // every special token).
    if (inner_->decode(ids, text, nullptr))
      return true;
    std::string out, piece;
    size_t start = 0;
    for (size_t i = 0; i <= ids.size(); ++i) {
      auto it = i < ids.size() ? contentOf_.find(ids[i]) : contentOf_.end();
      if (i < ids.size() && it == contentOf_.end())
        continue;
      if (i > start) {
        if (!inner_->decode(ids.subspan(start, i - start), &piece, error))
          return false;
        out += piece;
      }
      if (i < ids.size())
        out += it->second;
      start = i + 1;
    }
    *text = std::move(out);
    return true;
  }
  int64_t vocabSize() const override {
    int64_t size = inner_->vocabSize();
    for (const auto &[id, content] : contentOf_)
      size = std::max<int64_t>(size, static_cast<int64_t>(id) + 1);
    return size;
  }
  std::optional<int32_t> tokenId(std::string_view token) const override {
    for (const auto &[id, content] : contentOf_)
      if (content == token)
        return id;
    return inner_->tokenId(token);
  }

private:
  using Tokens = std::vector<std::pair<std::string, int32_t>>;

  static void append(std::vector<int32_t> &ids, const std::vector<int32_t> &more) {
    ids.insert(ids.end(), more.begin(), more.end());
  }

  /// Appends the id of each of `tokens` found in `text` (longest first) and
  /// hands the text between them to encodeText(part, part starts the text).
  template <typename EncodeText>
  static void cutAtAddedTokens(std::string_view text, const Tokens &tokens,
                               std::vector<int32_t> &ids, EncodeText encodeText) {
    size_t start = 0;
    for (size_t pos = 0; pos < text.size() && !tokens.empty();) {
      const std::pair<std::string, int32_t> *match = nullptr;
      for (const auto &token : tokens)
        if (text.compare(pos, token.first.size(), token.first) == 0) {
          match = &token;
          break;
        }
      if (!match) {
        ++pos;
        continue;
      }
      encodeText(text.substr(start, pos - start), start == 0);
      ids.push_back(match->second);
      pos += match->first.size();
      start = pos;
    }
    encodeText(text.substr(start), start == 0);
  }

  std::unique_ptr<Tokenizer> inner_;
  bool nfc_;
  Tokens rawTokens_, normalizedTokens_;
  SpecialTokens specials_;
  std::unordered_map<int32_t, std::string> contentOf_;
};

} // namespace

namespace detail {

std::unique_ptr<Tokenizer> openTokenizerJson(const std::string &path, std::string *error) {
  std::string contents;
  if (!readWholeFile(path, &contents, error))
    return nullptr;
  Json json;
  if (!parseJson(path, contents, &json, error))
    return nullptr;
  if (!json.is_object() || !json.contains("model") || !json["model"].is_object()) {
    fail(error, path + ": no \"model\" object (not a Hugging Face tokenizer.json)");
    return nullptr;
  }
  for (const char *key : {"normalizer", "pre_tokenizer", "decoder"})
    if (!json.contains(key))
      json[key] = nullptr;
  // BPE's "type" may be left out: it is the default model.
  const std::string type = stringField(json["model"], "type", "BPE");
  std::unique_ptr<Tokenizer> tokenizer;
  bool nfc = false;
  if (type == "BPE")
    tokenizer = openBpeJson(json, path, &nfc, error);
  else if (type == "WordPiece")
    tokenizer = openWordPieceJson(json, path, error);
  else
    fail(error, path + ": model type \"" + type +
                    "\" is not supported (BPE as GPT-2's and Llama 2's, WordPiece as BERT's)");
  if (!tokenizer)
    return nullptr;

  std::vector<AddedToken> added;
  if (json.contains("added_tokens") && json["added_tokens"].is_array())
    for (const Json &token : json["added_tokens"]) {
      if (!token.is_object() || !token.contains("id") || !token["id"].is_number_unsigned() ||
          token["id"].get<uint64_t>() >
              static_cast<uint64_t>(std::numeric_limits<int32_t>::max()) ||
          !token.contains("content") || !token["content"].is_string() ||
          token["content"].get<std::string>().empty()) {
        fail(error, path +
                        ": an \"added_tokens\" entry needs an \"id\" and a non-empty "
                        "\"content\": " +
                        token.dump().substr(0, 120));
        return nullptr;
      }
      added.push_back({token["content"].get<std::string>(), token["id"].get<int32_t>(),
                       boolField(token, "normalized", false)});
    }
  SpecialTokens specials;
  if (!readPostProcessor(json.value("post_processor", Json()), path, &specials, error))
    return nullptr;
  return std::make_unique<WithAddedTokens>(std::move(tokenizer), std::move(added), nfc,
                                           std::move(specials));
}

} // namespace detail

} // namespace tmr
