//===- HfImport.h - A spec from a Hugging Face config.json -------*- C++ -*-===//
//
// `tmc import DIR -o MODEL.tm`: the spec of a Hugging Face model folder, read
// from its config.json, with `weights = huggingface(FAMILY)` so that the
// compiled executable reads the folder's safetensors as they are. A config
// the spec language cannot express exactly is refused, naming the field and
// its value; nothing is approximated.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace tmc {

struct ImportOptions {
  /// The longest sequence the executable accepts; 0: the config's
  /// max_position_embeddings (n_positions).
  int64_t maxSeq = 0;
  /// The spec's model name; empty: from the folder's name.
  std::string name;
};

/// The spec text for the model in `folder` (its config.json), or an error
/// naming config.json and the field.
llvm::Expected<std::string> importHuggingFace(const std::string &folder,
                                              const ImportOptions &options);

} // namespace tmc
