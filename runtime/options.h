//===- options.h - The command line of a compiled model ---------*- C++ -*-===//
//
// Flags, their parsing and the range checks behind every "error: --flag: ..."
// a compiled executable prints; main.cpp only runs what they describe.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/generate.h"
#include "runtime/tmr_abi.h"

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tmr::cli {

constexpr int kMaxThreads = 1024;

/// Exit statuses: a problem with the command line itself (an unknown or
/// repeated flag, a missing required flag, a value outside its allowed range)
/// is a usage error, 2, as in getopt and argparse programs; a problem with a
/// file or a failure while running is 1.
constexpr int kExitFailure = 1, kExitUsage = 2;

/// The flags as given, before any checking.
struct Options {
  std::string weights, tokens, sourceTokens, segments, lengths, output, threads, maxNew, stop;
  std::string temperature, topK, topP, seed, beam, prompt, tokenizer;
  std::string presencePenalty, frequencyPenalty;
  std::string benchRuns, perplexity, batchInput, maxBatch;
  bool help = false, json = false, bench = false;
};

/// A flag that takes a value, and the string it is read into.
struct FlagValue {
  const char *name;
  std::string *value;
};

/// Reads argv[*i], one of `flags` as "--name value" or "--name=value",
/// into its string (advancing *i past a separate value); false + *error for
/// an unknown flag, a missing value or a flag given twice.
bool readFlagValue(int argc, char **argv, int *i, std::span<const FlagValue> flags,
                   std::string *error);

/// The executable's name as the user typed it (for the usage text).
std::string programName(const char *argv0);
void printUsage(FILE *out, const std::string &program, const tmr_model_desc &desc);
/// The two-line synopsis printed after a usage error (the error stays visible).
void printShortUsage(FILE *out, const std::string &program);
/// Fills `options` from argv; false + *error for an unknown flag, a missing
/// value or a flag given twice.
bool parseArgs(int argc, char **argv, Options *options, std::string *error);
bool parseInt(std::string_view text, int64_t *value, bool *outOfRange);
/// Prints each line of `message` as "error: LINE" on stderr.
void printError(const std::string &message);
/// printError(message); returns kExitUsage.
int usageError(const std::string &message);
/// "" when --output is none of the files the run reads (--weights, the
/// tokenizer's files); else the message naming the one it would replace.
std::string outputOverInput(const Options &options);
/// Parses --threads: an integer in [1, kMaxThreads]; 0 when not given (the
/// count the model was compiled with).
bool parseThreads(const std::string &text, int64_t *threads, std::string *error);
/// Parses an integer flag value and checks it lies in [low, high].
bool parseBounded(const char *flag, const std::string &text, int64_t low, int64_t high,
                  int64_t *value, std::string *error);
/// Splits and range-checks --tokens (and --source-tokens).
bool parseTokens(const std::string &text, const tmr_model_desc &desc, std::vector<int32_t> *tokens,
                 std::string *error);
/// Parses --segments: one id per token, each in [0, segments).
bool parseSegments(const std::string &text, const tmr_model_desc &desc, size_t count,
                   std::vector<int32_t> *ids, std::string *error);
/// "" when --perplexity can run with the other flags given and this model;
/// else the usage error: it needs --tokenizer and a decoder-only model with an
/// LM head, and takes no input, generation or output flags.
std::string perplexityConflict(const Options &options, const tmr_model_desc &desc);
/// "" when --batch-input can run with the other flags given;
/// else the usage error: the inputs come from the file, and beam search,
/// --bench and --perplexity do not apply.
std::string batchInputConflict(const Options &options);
/// The generation flags, each checked against its allowed range.
bool parseGeneration(const Options &options, const tmr_model_desc &desc,
                     GenerationOptions *generation, std::string *error);

} // namespace tmr::cli
