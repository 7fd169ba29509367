//===- tokenizer_internal.h - Helpers shared by the tokenizers ---*- C++ -*-===//
//
// Not part of the runtime's interface; included by the tokenizer sources only.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace tmr::detail {

/// The whole file at `path`; false + *error naming the path on failure.
bool readWholeFile(const std::string &path, std::string *contents, std::string *error);

/// Parses `contents`, the text of the JSON file `path`; false + *error giving
/// the line, column and byte offset of a syntax error and its cause (invalid
/// UTF-8, an unexpected end of input, ...), not just that the file is bad.
bool parseJson(const std::string &path, const std::string &contents, nlohmann::json *json,
               std::string *error);

/// Sets *error (when non-null) and returns false, for one-line error returns.
inline bool fail(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return false;
}

} // namespace tmr::detail
