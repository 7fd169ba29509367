//===- main.cpp - main() of every compiled model executable ---------------===//
//
// The generated executor only defines tmr_model(); everything a user touches
// (flags, weight loading and checking, token validation, output) lives here so
// that every compiled model behaves the same way:
//
//   MODEL --weights W.safetensors --tokens 1,2,3 [--output FILE.npy] [--threads N]
//
// Every problem ends in "error: ..." on stderr and exit status 1; bad input
// never reaches the model's run function.
//
//===----------------------------------------------------------------------===//
#include "runtime/npy.h"
#include "runtime/safetensors.h"
#include "runtime/tmr_abi.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>
#include <vector>

namespace {

constexpr int kMaxThreads = 1024;

struct Options {
  std::string weights, tokens, output, threads;
  bool help = false;
};

std::string programName(const char *argv0) {
  std::string name = argv0 && *argv0 ? argv0 : "model";
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

void printUsage(FILE *out, const std::string &program, const tmr_model_desc &desc) {
  std::fprintf(out,
               "usage: %s --weights W.safetensors --tokens 1,2,3 [--output FILE.npy] "
               "[--threads N]\n"
               "\n"
               "Runs the compiled model '%s' on one sequence of token ids; its output\n"
               "(%s) is f32 [1, tokens, %lld].\n"
               "\n"
               "options:\n"
               "  --weights FILE  safetensors weights matching the model's manifest\n"
               "                  (`tmc manifest` lists them, `tmc init-weights` makes some)\n"
               "  --tokens LIST   comma-separated token ids, each in [0, %lld), 1 to %lld of them\n"
               "  --output FILE   write the output as a NumPy .npy file instead of printing a\n"
               "                  summary\n"
               "  --threads N     worker threads, 0 (the default) for all cores, at most %d\n"
               "  --help          show this message\n",
               program.c_str(), desc.name ? desc.name : "?",
               desc.output_kind ? desc.output_kind : "model", (long long)desc.output_width,
               (long long)desc.vocab, (long long)desc.max_seq, kMaxThreads);
}

/// Fills `options` from argv; false + *error for an unknown flag, a missing
/// value or a flag given twice.
bool parseArgs(int argc, char **argv, Options *options, std::string *error) {
  struct Flag {
    const char *name;
    std::string *value;
  } flags[] = {{"--weights", &options->weights},
               {"--tokens", &options->tokens},
               {"--output", &options->output},
               {"--threads", &options->threads}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      options->help = true;
      continue;
    }
    size_t eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    Flag *flag = nullptr;
    for (Flag &f : flags)
      if (name == f.name)
        flag = &f;
    if (!flag) {
      *error = arg.rfind("-", 0) == 0 ? "unknown option '" + name + "'"
                                      : "unexpected argument '" + arg + "'";
      return false;
    }
    std::string value;
    if (eq != std::string::npos)
      value = arg.substr(eq + 1);
    else if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0)
      value = argv[++i];
    if (value.empty()) {
      *error = "missing value for " + name;
      return false;
    }
    if (!flag->value->empty()) {
      *error = name + " given more than once";
      return false;
    }
    *flag->value = value;
  }
  return true;
}

bool parseInt(std::string_view text, int64_t *value, bool *outOfRange) {
  while (!text.empty() && text.front() == ' ')
    text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ')
    text.remove_suffix(1);
  if (!text.empty() && text.front() == '+')
    text.remove_prefix(1);
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  *outOfRange = ec == std::errc::result_out_of_range;
  return !text.empty() && end == text.data() + text.size() && (ec == std::errc() || *outOfRange);
}

/// Splits and range-checks --tokens; the message names the bad token, its
/// position and the range the model accepts.
bool parseTokens(const std::string &text, const tmr_model_desc &desc, std::vector<int32_t> *tokens,
                 std::string *error) {
  std::vector<std::string_view> items;
  for (size_t start = 0;;) {
    size_t comma = text.find(',', start);
    items.push_back(std::string_view(text).substr(start, comma - start));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  std::string range = "[0, " + std::to_string(desc.vocab) + ")";
  if (int64_t(items.size()) > desc.max_seq) {
    *error = "--tokens: " + std::to_string(items.size()) +
             " tokens given, this model accepts 1 to " + std::to_string(desc.max_seq);
    return false;
  }
  for (size_t pos = 0; pos < items.size(); ++pos) {
    int64_t token = 0;
    bool outOfRange = false;
    std::string item(items[pos]);
    if (!parseInt(items[pos], &token, &outOfRange)) {
      *error = "--tokens: '" + item + "' (position " + std::to_string(pos) +
               ") is not an integer; expected comma-separated token ids like 1,2,3";
      return false;
    }
    if (outOfRange || token < 0 || token >= desc.vocab) {
      *error = "--tokens: token " + (outOfRange ? item : std::to_string(token)) + " (position " +
               std::to_string(pos) + ") is out of range " + range;
      return false;
    }
    tokens->push_back(static_cast<int32_t>(token));
  }
  return true;
}

/// The model description comes from generated code; check what main() relies
/// on before using it to size buffers.
bool checkDesc(const tmr_model_desc *desc, std::string *error) {
  if (!desc) {
    *error = "the model has no description (tmr_model() returned null)";
    return false;
  }
  if (desc->abi_version != TMR_ABI_VERSION) {
    *error = "the model was compiled for runtime ABI version " + std::to_string(desc->abi_version) +
             ", this runtime implements version " + std::to_string(TMR_ABI_VERSION) +
             "; recompile it with a matching tmc";
    return false;
  }
  bool ok = desc->run && desc->vocab > 0 &&
            desc->vocab - 1 <= std::numeric_limits<int32_t>::max() && desc->max_seq > 0 &&
            desc->output_width > 0 && desc->num_tensors >= 0 &&
            (desc->num_tensors == 0 || desc->tensors) &&
            desc->max_seq <= std::numeric_limits<int64_t>::max() / desc->output_width;
  if (!ok)
    *error = "the model's description is invalid (vocab " + std::to_string(desc->vocab) +
             ", max_seq " + std::to_string(desc->max_seq) + ", output_width " +
             std::to_string(desc->output_width) + ")";
  return ok;
}

void printSummary(const std::vector<float> &output, int64_t rows, int64_t width,
                  const tmr_model_desc &desc) {
  std::printf("output: f32 [1, %lld, %lld] (%s)\n", (long long)rows, (long long)width,
              desc.output_kind ? desc.output_kind : "output");
  constexpr int64_t kRows = 4, kValues = 8;
  for (int64_t r = 0; r < rows && r < kRows; ++r) {
    std::printf("  [%lld]", (long long)r);
    for (int64_t c = 0; c < width && c < kValues; ++c)
      std::printf(" %.6g", output[r * width + c]);
    std::printf(width > kValues ? " ... (%lld values)\n" : "\n", (long long)width);
  }
  if (rows > kRows)
    std::printf("  ... (%lld more rows)\n", (long long)(rows - kRows));
}

/// Prints each line of a (possibly multi-line) message as an error.
int reportError(const std::string &message) {
  size_t start = 0;
  do {
    size_t end = message.find('\n', start);
    std::fprintf(stderr, "error: %s\n", message.substr(start, end - start).c_str());
    start = end == std::string::npos ? end : end + 1;
  } while (start != std::string::npos);
  return 1;
}

int runMain(int argc, char **argv) {
  std::string error;
  const tmr_model_desc *desc = tmr_model();
  if (!checkDesc(desc, &error))
    return reportError(error);
  std::string program = programName(argc > 0 ? argv[0] : nullptr);

  Options options;
  if (!parseArgs(argc, argv, &options, &error)) {
    std::fprintf(stderr, "error: %s\n\n", error.c_str());
    printUsage(stderr, program, *desc);
    return 1;
  }
  if (options.help) {
    printUsage(stdout, program, *desc);
    return 0;
  }
  if (options.weights.empty() || options.tokens.empty()) {
    std::fprintf(stderr, "error: %s is required\n\n",
                 options.weights.empty() ? "--weights" : "--tokens");
    printUsage(stderr, program, *desc);
    return 1;
  }

  std::vector<int32_t> tokens;
  if (!parseTokens(options.tokens, *desc, &tokens, &error))
    return reportError(error);
  int64_t threads = 0;
  if (!options.threads.empty()) {
    bool outOfRange = false;
    if (!parseInt(options.threads, &threads, &outOfRange))
      return reportError("--threads: '" + options.threads + "' is not an integer");
    if (outOfRange || threads < 0 || threads > kMaxThreads)
      return reportError("--threads: " + options.threads + " is out of range [0, " +
                         std::to_string(kMaxThreads) + "]");
  }

  std::unique_ptr<tmr::SafetensorsFile> weights =
      tmr::SafetensorsFile::open(options.weights, &error);
  if (!weights)
    return reportError(error);
  if (!tmr::checkTensors(*weights, options.weights, desc->tensors, desc->num_tensors, &error))
    return reportError(error);
  std::vector<const void *> pointers;
  for (int32_t i = 0; i < desc->num_tensors; ++i)
    pointers.push_back(weights->find(desc->tensors[i].name)->data);

  int64_t numTokens = static_cast<int64_t>(tokens.size());
  // NaN, so that any element the model fails to write is visible.
  std::vector<float> output(size_t(numTokens * desc->output_width),
                            std::numeric_limits<float>::quiet_NaN());
  tmr_run_args args{};
  args.weights = pointers.data();
  args.tokens = tokens.data();
  args.num_tokens = numTokens;
  args.output = output.data();
  args.num_threads = static_cast<int32_t>(threads);
  char message[1024] = {0};
  int status = desc->run(&args, message, sizeof message);
  if (status != 0) {
    message[sizeof message - 1] = '\0';
    return reportError(message[0] ? message
                                  : "the model failed (status " + std::to_string(status) +
                                        ") without a message");
  }

  if (!options.output.empty()) {
    if (!tmr::writeNpyF32(options.output, {1, numTokens, desc->output_width}, output.data(),
                          &error))
      return reportError(error);
    std::printf("wrote %s: f32 [1, %lld, %lld]\n", options.output.c_str(), (long long)numTokens,
                (long long)desc->output_width);
  } else {
    printSummary(output, numTokens, desc->output_width, *desc);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // Allocation failure for a huge output, or anything else thrown, must still
  // end in a message rather than std::terminate.
  try {
    return runMain(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "error: unexpected failure\n");
  }
  return 1;
}
