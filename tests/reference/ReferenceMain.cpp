//===- ReferenceMain.cpp - tmc-reference: run the oracle from the shell ---===//
//
//   tmc-reference SPEC.tm --weights W.safetensors --tokens 1,2,3 [--output F.npy]
//
// Writes the reference's final tensor as f32 npy [1, T, width], the same
// layout a compiled executable's --output has, so the two can be diffed by a
// script; without --output it prints the rows. Exit status 1 on any error.
//
//===----------------------------------------------------------------------===//

#include "frontend/Frontend.h"
#include "runtime/npy.h"
#include "tests/reference/Reference.h"
#include "tests/reference/ReferenceWeights.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

const char *const usage =
    "usage: tmc-reference SPEC.tm --weights W.safetensors --tokens 1,2,3 "
    "[--output OUT.npy]\n";

int fail(const std::string &message) {
  llvm::errs() << "tmc-reference: error: " << message << "\n";
  return 1;
}

/// Parses "1,2,3"; false + *error on an empty list or a malformed entry.
bool parseTokens(const std::string &text, std::vector<int32_t> *tokens,
                 std::string *error) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(start, end - start);
    char *rest = nullptr;
    errno = 0;
    long value = item.empty() ? 0 : std::strtol(item.c_str(), &rest, 10);
    if (item.empty() || *rest != '\0' || errno != 0 || value < INT32_MIN ||
        value > INT32_MAX) {
      *error = "bad token '" + item + "' in --tokens " + text;
      return false;
    }
    tokens->push_back(static_cast<int32_t>(value));
    start = end + 1;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string specPath, weightsPath, tokensText, outputPath;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string *into) {
      if (i + 1 >= argc)
        return false;
      *into = argv[++i];
      return true;
    };
    bool ok = true;
    if (arg == "--weights")
      ok = value(&weightsPath);
    else if (arg == "--tokens")
      ok = value(&tokensText);
    else if (arg == "--output" || arg == "-o")
      ok = value(&outputPath);
    else if (arg == "--help" || arg == "-h") {
      llvm::outs() << usage;
      return 0;
    } else if (!arg.empty() && arg[0] != '-' && specPath.empty())
      specPath = arg;
    else
      return fail("unexpected argument '" + arg + "'\n" + usage);
    if (!ok)
      return fail(arg + " needs a value\n" + usage);
  }
  if (specPath.empty() || weightsPath.empty() || tokensText.empty())
    return fail(std::string("missing arguments\n") + usage);

  std::string error;
  std::vector<int32_t> tokens;
  if (!parseTokens(tokensText, &tokens, &error))
    return fail(error);

  tmc::LoadedSpec loaded = tmc::loadSpec(specPath, llvm::errs());
  if (!loaded.spec)
    return 1; // loadSpec has printed the diagnostics
  const tmc::ModelSpec &spec = *loaded.spec;

  auto weights = tmc::ref::ReferenceWeights::open(spec, weightsPath, &error);
  if (!weights)
    return fail(error);
  auto result = tmc::ref::evaluate(spec, weights->lookup(), tokens, &error);
  if (!result)
    return fail(error);

  int64_t width = spec.outputWidth();
  int64_t count = static_cast<int64_t>(tokens.size());
  if (outputPath.empty()) {
    for (int64_t p = 0; p < count; ++p) {
      for (int64_t j = 0; j < width; ++j)
        llvm::outs() << (j ? " " : "")
                     << llvm::format("%.7g", (*result)[p * width + j]);
      llvm::outs() << "\n";
    }
    return 0;
  }
  std::vector<float> data(result->begin(), result->end());
  if (!tmr::writeNpyF32(outputPath, {1, count, width}, data.data(), &error))
    return fail(error);
  return 0;
}
