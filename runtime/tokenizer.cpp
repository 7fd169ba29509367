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
#include <sstream>

namespace tmr {
namespace detail {

bool readWholeFile(const std::string &path, std::string *contents, std::string *error) {
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
  nlohmann::json config = nlohmann::json::parse(contents, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object())
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
                  " has neither encoder.json + vocab.bpe (GPT-2 BPE) nor vocab.txt (WordPiece)");
  return nullptr;
}

} // namespace tmr
