//===- TestSpecs.h - Helpers shared by the frontend unit tests -----*- C++
//-*-===//
#pragma once

#include "frontend/Frontend.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tmc::test {

/// A loaded spec and everything it printed.
struct Loaded {
  LoadedSpec result;
  std::string diagnostics;
};

inline Loaded load(llvm::StringRef source, llvm::StringRef name = "test.tm") {
  Loaded loaded;
  llvm::raw_string_ostream os(loaded.diagnostics);
  loaded.result = loadSpecFromString(source, name, os);
  return loaded;
}

/// A valid encoder-only model that tests extend or break: `model` lines are
/// added to the model block (from line 5 on), `stack` is the whole body of
/// encoder { }.
inline std::string
encoderSpec(llvm::StringRef model = "",
            llvm::StringRef stack = "layers = 2\nheads = 4\n") {
  std::string text = "model m {\n"
                     "  vocab = 100\n"
                     "  d_model = 64\n"
                     "  max_seq = 32\n";
  text += model.str();
  text += "  encoder {\n";
  text += stack.str();
  text += "  }\n}\n";
  return text;
}

} // namespace tmc::test
