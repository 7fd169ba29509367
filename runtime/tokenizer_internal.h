//===- tokenizer_internal.h - Helpers shared by the tokenizers ---*- C++ -*-===//
//
// Not part of the runtime's interface; included by the tokenizer sources only.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace tmr::detail {

/// The whole file at `path`; false + *error naming the path on failure.
bool readWholeFile(const std::string &path, std::string *contents, std::string *error);

/// Sets *error (when non-null) and returns false, for one-line error returns.
inline bool fail(std::string *error, std::string message) {
  if (error)
    *error = std::move(message);
  return false;
}

} // namespace tmr::detail
