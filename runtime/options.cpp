//===- options.cpp - The command line of a compiled model -----------------===//

#include "runtime/options.h"

#include "runtime/input_files.h"
#include "runtime/sampling.h"
#include "runtime/tokenizer.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

namespace tmr::cli {

std::string programName(const char *argv0) {
  std::string name = argv0 && *argv0 ? argv0 : "model";
  size_t slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

void printUsage(FILE *out, const std::string &program, const tmr_model_desc &desc) {
  std::fprintf(
      out,
      "usage: %s --weights W.safetensors (--tokens 1,2,3 | --prompt TEXT --tokenizer DIR)\n"
      "       [--output FILE.npy] [--threads N] [--max-new N [--temperature T] [--top-k K]\n"
      "       [--top-p P] [--seed S] [--beam B] [--stop ID]] [--json]\n"
      "\n"
      "Runs the compiled model '%s' on one sequence of token ids; its output\n"
      "(%s) is f32 [1, tokens, %lld].\n"
      "\n"
      "options:\n"
      "%s"
      "  --tokens LIST   comma-separated token ids, each in [0, %lld), 1 to %lld of them\n"
      "  --source-tokens LIST  an encoder-decoder model's source (the encoder's input);\n"
      "                  --tokens is then the decoder's prompt\n"
      "  --segments LIST segment (token type) ids, one per token of the first stack's\n"
      "                  input (models with segments; default all 0)\n"
      "  --lengths N     the valid length of the encoder's input (--tokens, or the\n"
      "                  source): later tokens are padding, hidden by `padding` masks\n"
      "                  and left out of mean pooling (default: all)\n"
      "  --output FILE   write the output as a NumPy .npy file instead of printing a\n"
      "                  summary; with --max-new, the logits of every position, prompt\n"
      "                  and generated (the decoding steps' rows)\n"
      "  --threads N     worker threads, 1 to %d (default: the count the model was\n"
      "                  compiled with, all cores unless `tmc compile --threads`)\n"
      "  --prompt TEXT   the input as text, encoded with --tokenizer (instead of --tokens);\n"
      "                  a tokenizer.json's post-processor adds its special tokens\n"
      "                  ([CLS] ... [SEP], <s> ...)\n"
      "  --tokenizer DIR a Hugging Face tokenizer.json, GPT-2 BPE (encoder.json +\n"
      "                  vocab.bpe) or WordPiece (vocab.txt);\n"
      "                  generated tokens are then also printed as text\n"
      "  --max-new N     generate N tokens after the prompt (decoders with an LM head);\n"
      "                  prompt + N must fit in max_seq\n"
      "  --temperature T sample from softmax(logits / T); 0 (default) is greedy\n"
      "  --top-k K       sample among the K most likely tokens (0: off)\n"
      "  --top-p P       sample among the smallest set with probability >= P (1: off)\n"
      "  --seed S        the sampler's seed (default 0); same seed, same tokens\n"
      "  --presence-penalty P, --frequency-penalty F\n"
      "                  lower a generated token's logit by P once it appears and by\n"
      "                  F for each time it appears (OpenAI's; each in [-2, 2], 0: off)\n"
      "  --beam B        length-normalized beam search with B beams\n"
      "  --stop ID       end generation after this token id\n"
      "  --json          print one JSON object: the prompt, the generated ids\n"
      "  --batch-input FILE  many inputs, one JSON object a line ({\"tokens\": [ids]} or\n"
      "                  {\"prompt\": TEXT}; optional \"segments\", \"length\", \"max_new\",\n"
      "                  \"seed\"; an encoder-decoder's also \"source_tokens\" or \"source\",\n"
      "                  which \"segments\" and \"length\" then label), run --max-batch at\n"
      "                  a time; results as JSON lines (stdout\n"
      "                  or --output FILE.jsonl) or --output FILE.npy [inputs, rows, width]\n"
      "  --max-batch B   sequences run together, 1 to the compiled --max-batch (default\n"
      "                  16, or less)\n"
      "  serve ...       run as an HTTP server (`serve --help` lists its options)\n"
      "  --perplexity FILE  the perplexity of a text file under the model (a decoder\n"
      "                  with an LM head; needs --tokenizer): windows of max_seq\n"
      "                  tokens advancing by max_seq/2, each token scored once\n"
      "  --bench         time the prompt run (and --max-new greedy decoding steps):\n"
      "                  medians over --bench-runs N runs (default 5) after a warm-up,\n"
      "                  with tokens per second and peak RSS\n"
      "  --help          show this message\n",
      program.c_str(), desc.name ? desc.name : "?", desc.output_kind ? desc.output_kind : "model",
      (long long)desc.output_width,
      desc.weight_scheme && *desc.weight_scheme
          ? "  --weights DIR   a Hugging Face checkpoint folder (model.safetensors, or\n"
            "                  shards and model.safetensors.index.json) of the family\n"
            "                  the spec names (weights = huggingface(...)), or a file\n"
            "                  with tmc's names (`tmc quantize` writes one)\n"
          : "  --weights FILE  safetensors weights matching the model's manifest\n"
            "                  (`tmc manifest` lists them, `tmc init-weights` makes some)\n",
      (long long)desc.vocab, (long long)desc.max_seq, kMaxThreads);
}

void printShortUsage(FILE *out, const std::string &program) {
  std::fprintf(out,
               "usage: %s --weights W.safetensors (--tokens 1,2,3 | --prompt TEXT --tokenizer DIR)\n"
               "       [options]   ('%s --help' lists them, with their allowed values)\n",
               program.c_str(), program.c_str());
}

std::string perplexityConflict(const Options &options, const tmr_model_desc &desc) {
  if (desc.cache_bytes <= 0 || std::string(desc.output_kind) != "logits" || desc.encoder_decoder)
    return "--perplexity: this model returns " + std::string(desc.output_kind) +
           (desc.encoder_decoder ? " from a source" : "") +
           "; only a decoder-only model with an LM head scores a text";
  if (options.tokenizer.empty())
    return "--perplexity needs --tokenizer DIR to turn the text into tokens";
  const std::pair<const char *, const std::string *> inputs[] = {
      {"--tokens", &options.tokens},   {"--prompt", &options.prompt},
      {"--max-new", &options.maxNew},  {"--output", &options.output},
      {"--source-tokens", &options.sourceTokens}, {"--segments", &options.segments},
      {"--lengths", &options.lengths}, {"--beam", &options.beam}};
  for (const auto &[flag, value] : inputs)
    if (!value->empty())
      return std::string("--perplexity scores the text file; ") + flag + " does not apply";
  if (options.bench)
    return "--perplexity reports its own tokens per second; --bench does not apply";
  return "";
}

std::string batchInputConflict(const Options &options) {
  const std::pair<const char *, const std::string *> inputs[] = {
      {"--tokens", &options.tokens},
      {"--prompt", &options.prompt},
      {"--source-tokens", &options.sourceTokens},
      {"--segments", &options.segments},
      {"--lengths", &options.lengths},
      {"--beam", &options.beam},
      {"--perplexity", &options.perplexity}};
  for (const auto &[flag, value] : inputs)
    if (!value->empty())
      return std::string("--batch-input reads every input from its file; ") + flag +
             " does not apply";
  if (options.bench)
    return "--batch-input reports its own throughput; --bench does not apply";
  return "";
}

/// Fills `options` from argv; false + *error for an unknown flag, a missing
/// value or a flag given twice.
bool parseArgs(int argc, char **argv, Options *options, std::string *error) {
  FlagValue flags[] = {{"--weights", &options->weights},
                       {"--tokens", &options->tokens},
                       {"--source-tokens", &options->sourceTokens},
                       {"--segments", &options->segments},
                       {"--lengths", &options->lengths},
                       {"--output", &options->output},
                       {"--threads", &options->threads},
                       {"--max-new", &options->maxNew},
                       {"--stop", &options->stop},
                       {"--temperature", &options->temperature},
                       {"--top-k", &options->topK},
                       {"--top-p", &options->topP},
                       {"--seed", &options->seed},
                       {"--presence-penalty", &options->presencePenalty},
                       {"--frequency-penalty", &options->frequencyPenalty},
                       {"--beam", &options->beam},
                       {"--prompt", &options->prompt},
                       {"--tokenizer", &options->tokenizer},
                       {"--bench-runs", &options->benchRuns},
                       {"--perplexity", &options->perplexity},
                       {"--batch-input", &options->batchInput},
                       {"--max-batch", &options->maxBatch}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      options->help = true;
      continue;
    }
    if (arg == "--json") {
      options->json = true;
      continue;
    }
    if (arg == "--bench") {
      options->bench = true;
      continue;
    }
    if (!readFlagValue(argc, argv, &i, flags, error))
      return false;
  }
  return true;
}

bool readFlagValue(int argc, char **argv, int *i, std::span<const FlagValue> flags,
                   std::string *error) {
  std::string arg = argv[*i];
  size_t eq = arg.find('=');
  std::string name = arg.substr(0, eq);
  const FlagValue *flag = nullptr;
  for (const FlagValue &f : flags)
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
  else if (*i + 1 < argc && std::string(argv[*i + 1]).rfind("--", 0) != 0)
    value = argv[++*i];
  if (value.empty()) {
    *error = "missing value for " + name;
    return false;
  }
  if (!flag->value->empty()) {
    *error = name + " given more than once";
    return false;
  }
  *flag->value = value;
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
      *error = "--tokens: token " + item + " (position " +
               std::to_string(pos) + ") is out of range " + range;
      return false;
    }
    tokens->push_back(static_cast<int32_t>(token));
  }
  return true;
}

/// Parses --segments: one id per token, each in [0, segments).
bool parseSegments(const std::string &text, const tmr_model_desc &desc, size_t count,
                   std::vector<int32_t> *ids, std::string *error) {
  if (desc.segments <= 0) {
    *error = "--segments: this model has no segment embeddings";
    return false;
  }
  size_t start = 0;
  for (size_t pos = 0;; ++pos) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    int64_t id = 0;
    bool outOfRange = false;
    if (!parseInt(item, &id, &outOfRange)) {
      *error = "--segments: '" + item + "' (position " + std::to_string(pos) +
               ") is not an integer";
      return false;
    }
    if (outOfRange || id < 0 || id >= desc.segments) {
      *error = "--segments: segment " + item + " (position " + std::to_string(pos) +
               ") is out of range [0, " + std::to_string(desc.segments) + ")";
      return false;
    }
    ids->push_back(static_cast<int32_t>(id));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (ids->size() != count) {
    *error = "--segments: " + std::to_string(ids->size()) + " ids given for " +
             std::to_string(count) + " tokens; give one per token";
    return false;
  }
  return true;
}

void printError(const std::string &message) {
  size_t start = 0;
  do {
    size_t end = message.find('\n', start);
    std::fprintf(stderr, "error: %s\n", message.substr(start, end - start).c_str());
    start = end == std::string::npos ? end : end + 1;
  } while (start != std::string::npos);
}

int usageError(const std::string &message) {
  printError(message);
  return kExitUsage;
}

std::string outputOverInput(const Options &options) {
  if (options.output.empty())
    return "";
  std::vector<InputFile> inputs = {{"the weights", options.weights}};
  if (!options.batchInput.empty())
    inputs.push_back({"the batch input", options.batchInput});
  if (!options.tokenizer.empty())
    for (const char *name : Tokenizer::kFileNames)
      inputs.push_back({std::string("the tokenizer's ") + name, options.tokenizer + "/" + name});
  return overwrittenInput("--output", options.output, inputs);
}

bool parseThreads(const std::string &text, int64_t *threads, std::string *error) {
  *threads = 0;
  // 0 would silently mean "the default": leaving the flag out says that.
  return text.empty() || parseBounded("--threads", text, 1, kMaxThreads, threads, error);
}

/// Parses an integer flag value and checks it lies in [low, high].
bool parseBounded(const char *flag, const std::string &text, int64_t low, int64_t high,
                  int64_t *value, std::string *error) {
  bool outOfRange = false;
  if (!parseInt(text, value, &outOfRange)) {
    *error = std::string(flag) + ": '" + text + "' is not an integer";
    return false;
  }
  if (outOfRange || *value < low || *value > high) {
    *error = std::string(flag) + ": " + text + " is out of range [" + std::to_string(low) +
             ", " + std::to_string(high) + "]";
    return false;
  }
  return true;
}

namespace {
/// A float flag, range-checked as the number written (a double), so that the
/// message echoes it as given: as a float, 1.0000001 reads back as "1" and
/// 1e39 as "inf", which hides what is wrong. `range` is the interval low..high
/// as the message shows it, open at low when `lowOpen`.
bool parseFloat(const char *flag, const std::string &text, double low, bool lowOpen, double high,
                const std::string &range, float *value, std::string *error) {
  char *end = nullptr;
  errno = 0;
  double parsed = std::strtod(text.c_str(), &end);
  bool overflow = errno == ERANGE && std::isinf(parsed); // "1e400": a number, out of range
  if (text.empty() || end != text.c_str() + text.size() ||
      (!std::isfinite(parsed) && !overflow)) {
    *error = std::string(flag) + ": '" + text + "' is not a finite number";
    return false;
  }
  if (overflow || parsed < low || (lowOpen && parsed == low) || parsed > high) {
    *error = std::string(flag) + ": " + text + " is out of range " + range;
    return false;
  }
  *value = static_cast<float>(parsed);
  // A positive value below the smallest float would become 0, which an open
  // range excludes: keep it the least positive float. (A tiny temperature
  // becoming 0, greedy, is its limit anyway.)
  if (lowOpen && parsed > 0 && *value == 0)
    *value = std::numeric_limits<float>::denorm_min();
  return true;
}
} // namespace

/// The generation flags, each checked against its allowed range.
bool parseGeneration(const Options &options, const tmr_model_desc &desc,
                     GenerationOptions *generation, std::string *error) {
  int64_t value = 0;
  if (!options.maxNew.empty()) {
    if (!parseBounded("--max-new", options.maxNew, 0, desc.max_seq, &value, error))
      return false;
    generation->maxNew = value;
  }
  if (!options.stop.empty()) {
    if (!parseBounded("--stop", options.stop, 0, desc.vocab - 1, &value, error))
      return false;
    generation->stop = static_cast<int32_t>(value);
  }
  if (!options.topK.empty()) {
    if (!parseBounded("--top-k", options.topK, 0, desc.vocab, &value, error))
      return false;
    generation->sampling.topK = static_cast<int32_t>(value);
  }
  if (!options.beam.empty()) {
    if (!parseBounded("--beam", options.beam, 1, 64, &value, error))
      return false;
    generation->beams = static_cast<int32_t>(value);
  }
  if (!options.seed.empty()) {
    bool outOfRange = false;
    int64_t seed = 0;
    if (!parseInt(options.seed, &seed, &outOfRange) || outOfRange || seed < 0) {
      *error = "--seed: '" + options.seed + "' must be an integer in [0, 2^63)";
      return false;
    }
    generation->sampling.seed = static_cast<uint64_t>(seed);
  }
  constexpr double kMaxFloat = std::numeric_limits<float>::max();
  if (!options.temperature.empty() &&
      !parseFloat("--temperature", options.temperature, 0, false, kMaxFloat,
                  "[0, 3.4e38] (0 = greedy)", &generation->sampling.temperature, error))
    return false;
  if (!options.topP.empty() && !parseFloat("--top-p", options.topP, 0, true, 1, "(0, 1] (1 = off)",
                                           &generation->sampling.topP, error))
    return false;
  if (!options.presencePenalty.empty() &&
      !parseFloat("--presence-penalty", options.presencePenalty, -2, false, 2, "[-2, 2] (0 = off)",
                  &generation->sampling.presencePenalty, error))
    return false;
  if (!options.frequencyPenalty.empty() &&
      !parseFloat("--frequency-penalty", options.frequencyPenalty, -2, false, 2,
                  "[-2, 2] (0 = off)", &generation->sampling.frequencyPenalty, error))
    return false;
  std::string problem = validate(generation->sampling);
  if (!problem.empty()) {
    *error = problem;
    return false;
  }
  if (generation->beams > 1 &&
      (generation->sampling.temperature > 0 || generation->sampling.topK > 0 ||
       generation->sampling.topP < 1 || generation->sampling.presencePenalty != 0 ||
       generation->sampling.frequencyPenalty != 0)) {
    *error = "--beam: beam search is deterministic and unpenalized; drop --temperature, --top-k, "
             "--top-p and the penalties";
    return false;
  }
  return true;
}

} // namespace tmr::cli
