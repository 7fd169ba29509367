//===- tokenizer.cpp - Finding and configuring a tokenizer directory ------===//
//
// Tokenizer::open looks at which files a directory holds, as `--tokenizer
// DIR` should work on a model's tokenizer folder without naming the kind.
//
//===----------------------------------------------------------------------===//
#include "runtime/tokenizer.h"
#include "runtime/tokenizer_internal.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace tmr {
namespace detail {

bool readWholeFile(const std::string &path, std::string *contents, std::string *error) {
  // A directory opens as an empty stream: it would read as an empty file;
  // a FIFO would block the open until a writer came.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return fail(error, path + " is a directory, not a file");
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    return fail(error, path + " is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(error, "cannot open " + path + ": " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad())
    return fail(error, "cannot read " + path);
  *contents = std::move(buffer).str();
  return true;
}

bool parseJson(const std::string &path, const std::string &contents, nlohmann::json *json,
               std::string *error) {
  try {
    *json = nlohmann::json::parse(contents);
    return true;
  } catch (const nlohmann::json::parse_error &e) {
    // what() is "[json.exception.parse_error.101] parse error at line 2,
    // column 7: CAUSE; last read: 'TEXT'; expected ...". The "last read"
    // part is left out: it quotes the file's raw, possibly invalid, bytes.
    std::string what = e.what(), where, cause = what;
    const std::string at = "parse error at line ";
    if (size_t start = what.find(at); start != std::string::npos) {
      size_t comma = what.find(", column ", start), colon = what.find(": ", start);
      if (comma != std::string::npos && colon != std::string::npos && comma < colon) {
        where = what.substr(start + at.size(), comma - start - at.size()) + ":" +
                what.substr(comma + 9, colon - comma - 9) + ": ";
        cause = what.substr(colon + 2);
      }
    }
    if (size_t last = cause.find("; last read: '"); last != std::string::npos) {
      size_t expected = cause.find("'; expected ", last);
      cause.erase(last, expected == std::string::npos ? std::string::npos : expected + 1 - last);
    }
    return fail(error, path + ":" + where + "not valid JSON: " + cause + " (byte offset " +
                           std::to_string(e.byte > 0 ? e.byte - 1 : 0) + ")");
  }
}

bool MergeTable::add(const std::string &left, const std::string &right, int32_t rank,
                     const std::unordered_map<std::string, int32_t> &ids, const std::string &where,
                     std::string *error) {
  auto a = ids.find(left), b = ids.find(right), merged = ids.find(left + right);
  for (auto [it, token] : {std::pair{a, left}, {b, right}, {merged, left + right}})
    if (it == ids.end())
      return fail(error, where + "\"" + token + "\" is not in the vocabulary");
  merges_[key(a->second, b->second)] = Merge{rank, merged->second};
  return true;
}

bool readTokenId(const nlohmann::json &value, const std::string &token, const std::string &where,
                 int32_t *id, std::string *error) {
  constexpr int64_t kMaxId = std::numeric_limits<int32_t>::max() - 1;
  if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > kMaxId)
    return fail(error, where + ": the id of token \"" + token + "\" is not an integer in [0, " +
                           std::to_string(kMaxId) + "]");
  *id = static_cast<int32_t>(value.get<int64_t>());
  return true;
}

} // namespace detail

namespace {

using detail::fail;

/// A token option of tokenizer_config.json: a string, or an AddedToken
/// object whose "content" is the string.
bool readTokenOption(const nlohmann::json &config, const char *key, const std::string &path,
                     std::string *value, std::string *error) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null())
    return true;
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    *value = (*it)["content"].get<std::string>();
    return true;
  }
  if (!it->is_string())
    return fail(error, path + ": \"" + key + "\" must be a string");
  *value = it->get<std::string>();
  return true;
}

bool readBoolOption(const nlohmann::json &config, const char *key, const std::string &path,
                    std::optional<bool> *value, std::string *error) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null())
    return true;
  if (!it->is_boolean())
    return fail(error, path + ": \"" + key + "\" must be true, false or null");
  *value = it->get<bool>();
  return true;
}

/// WordPiece options from the Hugging Face tokenizer_config.json next to
/// vocab.txt, when there is one; the keys it does not know are ignored.
bool readWordPieceConfig(const std::string &path, WordPieceOptions *options, std::string *error) {
  std::string contents;
  if (!detail::readWholeFile(path, &contents, error))
    return false;
  nlohmann::json config;
  if (!detail::parseJson(path, contents, &config, error))
    return false;
  if (!config.is_object())
    return fail(error, path + ": expected a JSON object");
  std::optional<bool> lowercase, splitCjk, cleanUp;
  if (!readBoolOption(config, "do_lower_case", path, &lowercase, error) ||
      !readBoolOption(config, "strip_accents", path, &options->stripAccents, error) ||
      !readBoolOption(config, "tokenize_chinese_chars", path, &splitCjk, error) ||
      !readBoolOption(config, "clean_up_tokenization_spaces", path, &cleanUp, error) ||
      !readTokenOption(config, "unk_token", path, &options->unknownToken, error))
    return false;
  options->lowercase = lowercase.value_or(options->lowercase);
  options->splitCjk = splitCjk.value_or(options->splitCjk);
  options->cleanUpSpaces = cleanUp.value_or(options->cleanUpSpaces);
  return true;
}

} // namespace

std::string Tokenizer::decodeKnown(std::span<const int32_t> ids, size_t *dropped) const {
  std::string text, error;
  if (dropped)
    *dropped = 0;
  if (decode(ids, &text, &error))
    return text;
  // Some id has no text: decoded again without the ids that fail alone.
  std::vector<int32_t> known;
  known.reserve(ids.size());
  for (int32_t id : ids) {
    std::string piece;
    if (decode(std::span<const int32_t>(&id, 1), &piece, &error))
      known.push_back(id);
    else if (dropped)
      ++*dropped;
  }
  text.clear();
  if (!decode(known, &text, &error))
    text.clear(); // not expected: each of them decoded alone
  return text;
}

std::unique_ptr<Tokenizer> Tokenizer::open(const std::string &dir, std::string *error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    fail(error, "tokenizer directory " + dir +
                    (fs::exists(dir, ec) ? " is not a directory" : " does not exist"));
    return nullptr;
  }
  auto file = [&](const char *name) { return (fs::path(dir) / name).string(); };
  auto has = [&](const char *name) { return fs::exists(file(name), ec); };
  // A Hugging Face folder's fast tokenizer: the one its model was used with
  // when the folder also keeps a slow tokenizer's files.
  if (has("tokenizer.json"))
    return detail::openTokenizerJson(file("tokenizer.json"), error);
  if (has("encoder.json") || has("vocab.bpe")) {
    for (const char *name : {"encoder.json", "vocab.bpe"})
      if (!has(name)) {
        fail(error, "tokenizer directory " + dir + " has " +
                        (std::string(name) == "vocab.bpe" ? "encoder.json but no vocab.bpe"
                                                          : "vocab.bpe but no encoder.json") +
                        " (GPT-2 BPE needs both)");
        return nullptr;
      }
    return openBpeTokenizer(file("encoder.json"), file("vocab.bpe"), error);
  }
  if (has("vocab.txt")) {
    WordPieceOptions options;
    if (has("tokenizer_config.json") &&
        !readWordPieceConfig(file("tokenizer_config.json"), &options, error))
      return nullptr;
    return openWordPieceTokenizer(file("vocab.txt"), options, error);
  }
  fail(error, "tokenizer directory " + dir +
                  " has no tokenizer.json (Hugging Face), encoder.json + vocab.bpe (GPT-2 BPE) "
                  "or vocab.txt (WordPiece)");
  return nullptr;
}

} // namespace tmr
