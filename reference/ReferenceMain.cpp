//===- ReferenceMain.cpp - tmc-reference: run the oracle from the shell ---===//
//
//   tmc-reference SPEC.tm --weights W.safetensors --tokens 1,2,3
//       [--source-tokens 4,5] [--segments 0,0,1] [--lengths N]
//       [--source-lengths N] [--output F.npy]
//
// Writes the reference's final tensor as f32 npy [1, rows, width] (rows = T,
// or 1 for a classifier), the same layout a compiled executable's --output
// has, so the two can be diffed by a script; without --output it prints the
// rows. Exit status 1 on any error.
//
//===----------------------------------------------------------------------===//

#include "frontend/Frontend.h"
#include "runtime/npy.h"
#include "reference/Reference.h"
#include "reference/ReferenceWeights.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace {

const char *const usage =
    "usage: tmc-reference SPEC.tm --weights W.safetensors --tokens 1,2,3\n"
    "         [--source-tokens 4,5]   encoder-decoder: the encoder's input\n"
    "         [--segments 0,0,1]      segment ids of the first stack's input\n"
    "         [--lengths N]           valid length of --tokens (padding)\n"
    "         [--source-lengths N]    valid length of --source-tokens\n"
    "         [--output OUT.npy]      f32 [1, rows, width]; else rows are printed\n";

int fail(const std::string &message) {
  llvm::errs() << "tmc-reference: error: " << message << "\n";
  return 1;
}

/// Parses "1,2,3" given to `flag`; false + *error on an empty list or a
/// malformed entry.
bool parseList(const std::string &flag, const std::string &text,
               std::vector<int32_t> *tokens, std::string *error) {
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
      *error = "bad number '" + item + "' in " + flag + " " + text;
      return false;
    }
    tokens->push_back(static_cast<int32_t>(value));
    start = end + 1;
  }
  return true;
}

/// Parses a length N >= 0 given to `flag`.
bool parseLength(const std::string &flag, const std::string &text,
                 std::optional<int64_t> *length, std::string *error) {
  char *rest = nullptr;
  errno = 0;
  long long value = text.empty() ? -1 : std::strtoll(text.c_str(), &rest, 10);
  if (text.empty() || *rest != '\0' || errno != 0 || value < 0) {
    *error = "bad length '" + text + "' for " + flag;
    return false;
  }
  *length = static_cast<int64_t>(value);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string specPath, weightsPath, tokensText, outputPath;
  std::string sourceText, segmentsText, lengthText, sourceLengthText;
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
    else if (arg == "--source-tokens")
      ok = value(&sourceText);
    else if (arg == "--segments")
      ok = value(&segmentsText);
    else if (arg == "--lengths")
      ok = value(&lengthText);
    else if (arg == "--source-lengths")
      ok = value(&sourceLengthText);
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
  tmc::ref::Inputs inputs;
  if (!parseList("--tokens", tokensText, &inputs.tokens, &error) ||
      (!sourceText.empty() &&
       !parseList("--source-tokens", sourceText, &inputs.sourceTokens, &error)) ||
      (!segmentsText.empty() &&
       !parseList("--segments", segmentsText, &inputs.segments, &error)) ||
      (!lengthText.empty() && !parseLength("--lengths", lengthText, &inputs.length, &error)) ||
      (!sourceLengthText.empty() &&
       !parseLength("--source-lengths", sourceLengthText, &inputs.sourceLength, &error)))
    return fail(error);

  tmc::LoadedSpec loaded = tmc::loadSpec(specPath, llvm::errs());
  if (!loaded.spec)
    return 1; // loadSpec has printed the diagnostics
  const tmc::ModelSpec &spec = *loaded.spec;

  auto weights = tmc::ref::ReferenceWeights::open(spec, weightsPath, &error);
  if (!weights)
    return fail(error);
  auto result = tmc::ref::evaluate(spec, weights->lookup(), inputs, &error);
  if (!result)
    return fail(error);

  int64_t width = spec.outputWidth();
  int64_t count =
      tmc::ref::outputRows(spec, static_cast<int64_t>(inputs.tokens.size()));
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
