//===- main.cpp - main() of every compiled model executable ---------------===//
//
// The generated executor only defines tmr_compiled_model(); everything a user
// touches (flags, token validation, output) lives here so that every compiled
// model behaves the same way. Weights are opened, checked and prepared through
// the embedding API (tmr.h), exactly as a program linking libNAME.a does:
//
//   MODEL --weights W.safetensors --tokens 1,2,3 [--output FILE.npy] [--threads N]
//         [--max-new N [--stop ID] [--json]]
//
// A decoder with an LM head generates: the prompt runs once (its keys and
// values go to the caches), then one decoding step per new token reads the
// caches instead of recomputing the prefix.
//
// Every problem ends in "error: ..." on stderr and exit status 1, or 2 for a
// problem with the command line (options.h); bad input never reaches the
// model's run function.
//
//===----------------------------------------------------------------------===//
#include "runtime/bench.h"
#include "runtime/generate.h"
#include "runtime/npy.h"
#include "runtime/options.h"
#include "runtime/perplexity.h"
#include "runtime/serve.h"
#include "runtime/session.h"
#include "runtime/tmr.h"
#include "runtime/tmr_abi.h"
#include "runtime/tmr_capi_internal.h"
#include "runtime/tokenizer.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace {

using namespace tmr::cli;

void printSummary(const tmr::AlignedVector<float> &output, int64_t rows, int64_t width,
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
  printError(message);
  return kExitFailure;
}

std::string joinIds(const std::vector<int32_t> &ids, const char *separator, const char *open,
                    const char *close) {
  std::string text = open;
  for (size_t i = 0; i < ids.size(); ++i)
    text += (i ? separator : "") + std::to_string(ids[i]);
  return text + close;
}

/// The memory the model plans for (--json --bench): peak RSS should stay near their sum.
std::string memoryJson(const tmr_model *model) {
  tmr_model_info info{};
  if (tmr_model_get_info(model, &info) != TMR_OK)
    return "";
  return ", \"weight_bytes\": " + std::to_string(info.weight_bytes) +
         ", \"cache_bytes\": " + std::to_string(info.cache_bytes) +
         ", \"arena_bytes\": " + std::to_string(info.arena_bytes);
}

/// The kernels' instruction set (the generated executor's, or "unknown").
const char *compiledIsa() { return tmr_compiled_isa ? tmr_compiled_isa() : "unknown"; }

/// --perplexity: scores the text file and prints the result (--json: one
/// object with the field `perplexity`).
int runPerplexity(const Options &options, const tmr_model_desc &desc,
                  const tmr::Tokenizer &tokenizer, const std::vector<const void *> &weights,
                  const void *prepared, int32_t threads) {
  std::string text, error;
  if (!tmr::readPerplexityText(options.perplexity, &text, &error))
    return reportError(error);
  std::vector<int32_t> ids = tokenizer.encode(text);
  tmr::Session session(desc, weights, prepared, threads);
  tmr::PerplexityResult result;
  if (!tmr::measurePerplexity(session, ids, &result, &error))
    return reportError(error);
  double tokensPerSecond = result.seconds > 0 ? result.scoredTokens / result.seconds : 0.0;
  if (options.json) {
    std::printf("{\"model\": \"%s\", \"isa\": \"%s\", \"perplexity\": %.17g, "
                "\"mean_nll\": %.17g, \"text_tokens\": %lld, \"scored_tokens\": %lld, "
                "\"windows\": %lld, \"window\": %lld, \"stride\": %lld, "
                "\"tokens_per_second\": %.1f}\n",
                desc.name, compiledIsa(), result.perplexity, result.meanNegativeLogLikelihood,
                (long long)result.textTokens, (long long)result.scoredTokens,
                (long long)result.windows, (long long)desc.max_seq, (long long)result.stride,
                tokensPerSecond);
  } else {
    std::printf("perplexity: %.4f (mean negative log-likelihood %.6f nats) over %lld tokens of "
                "%s\n  %lld windows of %lld tokens, stride %lld; %.1f tokens/s, isa %s\n",
                result.perplexity, result.meanNegativeLogLikelihood,
                (long long)result.scoredTokens, options.perplexity.c_str(),
                (long long)result.windows, (long long)desc.max_seq, (long long)result.stride,
                tokensPerSecond, compiledIsa());
  }
  return 0;
}

/// --batch-input: the generation flags and --max-batch checked, then the file run.
int runBatchFile(const Options &options, const tmr_model_desc &desc,
                 const tmr::Tokenizer *tokenizer, const std::vector<const void *> &weights,
                 const void *prepared, int32_t threads) {
  std::string error;
  tmr::GenerationOptions generation;
  if (!parseGeneration(options, desc, &generation, &error))
    return usageError(error);
  bool generates = desc.cache_bytes > 0 && std::string(desc.output_kind) == "logits";
  if (generation.maxNew > 0 && !generates)
    return usageError("--max-new: this model does not generate (it returns " +
                      std::string(desc.output_kind) + "); only a decoder with an LM head does");
  const int64_t batchLimit = desc.max_batch > 1 ? desc.max_batch : 256;
  int64_t slots = std::min<int64_t>(16, batchLimit);
  if (!options.maxBatch.empty() &&
      !parseBounded("--max-batch", options.maxBatch, 1, batchLimit, &slots, &error))
    return usageError(error);
  tmr::serve::BatchFileOptions batch;
  batch.output = options.output;
  batch.slots = static_cast<int32_t>(slots);
  batch.threads = threads;
  batch.maxNew = generation.maxNew;
  batch.sampling = generation.sampling;
  batch.stop = generation.stop;
  return tmr::serve::runBatchFile(options.batchInput, desc, weights, prepared, tokenizer, batch);
}

int runMain(int argc, char **argv) {
  std::string error;
  const tmr_model_desc *desc = tmr_compiled_model();
  if (!tmr::checkCompiledModel(desc, &error))
    return reportError(error);
  std::string program = programName(argc > 0 ? argv[0] : nullptr);
  if (argc > 1 && std::string(argv[1]) == "serve")
    return tmr::serve::serveCommand(argc - 2, argv + 2, *desc, program);

  Options options;
  if (!parseArgs(argc, argv, &options, &error)) {
    std::fprintf(stderr, "error: %s\n\n", error.c_str());
    printShortUsage(stderr, program);
    return kExitUsage;
  }
  if (options.help) {
    printUsage(stdout, program, *desc);
    return 0;
  }
  const bool perplexity = !options.perplexity.empty();
  const bool batchFile = !options.batchInput.empty();
  if (batchFile) {
    if (std::string conflict = batchInputConflict(options); !conflict.empty())
      return usageError(conflict);
  }
  if (options.weights.empty() ||
      (!perplexity && !batchFile && options.tokens.empty() == options.prompt.empty())) {
    std::fprintf(stderr, "error: %s\n\n",
                 options.weights.empty()  ? "--weights is required"
                 : options.tokens.empty() ? "--tokens is required (or --prompt with --tokenizer)"
                                          : "give the input as --tokens or --prompt, not both");
    printShortUsage(stderr, program);
    return kExitUsage;
  }
  if (!options.prompt.empty() && options.tokenizer.empty())
    return usageError("--prompt needs --tokenizer DIR to turn the text into tokens");
  if (perplexity) {
    if (std::string conflict = perplexityConflict(options, *desc); !conflict.empty())
      return usageError(conflict);
  }
  // Before anything is read: the run would end by replacing one of its inputs.
  if (std::string problem = outputOverInput(options); !problem.empty())
    return usageError(problem);

  std::unique_ptr<tmr::Tokenizer> tokenizer;
  if (!options.tokenizer.empty()) {
    tokenizer = tmr::Tokenizer::open(options.tokenizer, &error);
    if (!tokenizer)
      return reportError(error);
    // Every id the tokenizer can produce must be one of the model's.
    if (tokenizer->vocabSize() > desc->vocab)
      return reportError("--tokenizer " + options.tokenizer + ": its " +
                         std::string(tokenizer->kind()) + " vocabulary has ids up to " +
                         std::to_string(tokenizer->vocabSize() - 1) +
                         ", but the model's vocabulary is [0, " + std::to_string(desc->vocab) +
                         ")");
    // The other way, ids the model can produce should be the tokenizer's. A
    // GPT-2 BPE vocabulary may be smaller: decoders pad their embedding table
    // (50257 ids to 50304) with ids a trained model all but never generates;
    // one that does adds no text (Tokenizer::decodeKnown, with a warning). A
    // WordPiece vocab.txt is the model's table line for line, so fewer lines
    // mean another model's vocabulary, found now rather than when a generated
    // id has no text.
    if (tokenizer->kind() == "wordpiece" && tokenizer->vocabSize() < desc->vocab)
      return reportError("--tokenizer " + options.tokenizer + ": its WordPiece vocabulary has " +
                         std::to_string(tokenizer->vocabSize()) + " tokens, but the model's has " +
                         std::to_string(desc->vocab) + ": vocab.txt lists the model's vocabulary "
                         "one token a line, so ids " + std::to_string(tokenizer->vocabSize()) +
                         " to " + std::to_string(desc->vocab - 1) + " would have no text");
  }
  std::vector<int32_t> tokens;
  if (!options.prompt.empty()) {
    tokens = tokenizer->addSpecialTokens(tokenizer->encode(options.prompt));
    if (tokens.empty())
      return usageError("--prompt: the text encodes to no tokens");
    if (static_cast<int64_t>(tokens.size()) > desc->max_seq)
      return usageError("--prompt: " + std::to_string(tokens.size()) +
                         " tokens, this model accepts 1 to " + std::to_string(desc->max_seq));
  } else if (!perplexity && !batchFile && !parseTokens(options.tokens, *desc, &tokens, &error)) {
    return usageError(error);
  }
  int64_t threads = 0, benchRuns = 5;
  if (!parseThreads(options.threads, &threads, &error) ||
      (!options.benchRuns.empty() &&
       !parseBounded("--bench-runs", options.benchRuns, 1, 1000, &benchRuns, &error)))
    return usageError(error);

  // Opened, checked against the manifest, widened to f32 and packed.
  tmr_model_params params = tmr_model_default_params();
  params.threads = static_cast<int32_t>(threads);
  tmr_model *handle = nullptr;
  if (tmr_model_open_compiled(desc, options.weights.c_str(), &params, &handle) != TMR_OK)
    return reportError(tmr_last_error());
  std::unique_ptr<tmr_model, void (*)(tmr_model *)> model(handle, tmr_model_close);
  const std::vector<const void *> &pointers = tmr::modelOf(handle).weights();
  const void *prepared = tmr::modelOf(handle).prepared();
  for (const std::string &warning : tmr::modelOf(handle).warnings())
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  if (perplexity)
    return runPerplexity(options, *desc, *tokenizer, pointers, prepared,
                         static_cast<int32_t>(threads));
  if (batchFile)
    return runBatchFile(options, *desc, tokenizer.get(), pointers, prepared,
                        static_cast<int32_t>(threads));

  tmr::GenerationOptions generation;
  if (!parseGeneration(options, *desc, &generation, &error))
    return usageError(error);
  int64_t numTokens = static_cast<int64_t>(tokens.size());
  bool generates = desc->cache_bytes > 0 && std::string(desc->output_kind) == "logits";
  if (generation.maxNew > 0 && !generates)
    return usageError("--max-new: this model does not generate (it returns " +
                       std::string(desc->output_kind) + "); only a decoder with an LM head does");
  if (int64_t room = desc->max_seq - numTokens; generation.maxNew > room)
    return usageError(
        "--max-new: " + options.maxNew + " is out of range [0, " + std::to_string(room) + "]: " +
        (room == 0 ? "the " + std::to_string(numTokens) + "-token prompt already fills max_seq (" +
                         std::to_string(desc->max_seq) + "), so no token can be generated"
                   : "the prompt takes " + std::to_string(numTokens) + " of max_seq (" +
                         std::to_string(desc->max_seq) + ") positions"));

  std::vector<int32_t> source;
  if (desc->encoder_decoder) {
    if (options.sourceTokens.empty())
      return usageError("--source-tokens is required: this encoder-decoder model encodes a "
                         "source and decodes --tokens from it");
    if (!parseTokens(options.sourceTokens, *desc, &source, &error))
      return usageError("--source-tokens" + error.substr(error.find(':')));
  } else if (!options.sourceTokens.empty()) {
    return usageError("--source-tokens: this model has no encoder-decoder structure");
  }
  std::vector<int32_t> segments;
  if (!options.segments.empty() &&
      !parseSegments(options.segments, *desc, desc->encoder_decoder ? source.size() : tokens.size(),
                     &segments, &error))
    return usageError(error);

  int64_t length = 0;
  if (!options.lengths.empty()) {
    if (desc->cache_bytes > 0 && !desc->encoder_decoder)
      return usageError("--lengths: a decoder's prompt has no padding; --lengths applies to an "
                         "encoder's input");
    int64_t valid = desc->encoder_decoder ? static_cast<int64_t>(source.size()) : numTokens;
    if (!parseBounded("--lengths", options.lengths, 1, valid, &length, &error))
      return usageError(error);
  }

  auto session =
      std::make_unique<tmr::Session>(*desc, pointers, prepared, static_cast<int32_t>(threads));
  session->setSource(source);
  session->setLength(length);
  // The prompt, once; then one decoding step per new token, reading the caches.
  // Generating, only the prompt's last row of logits is read unless --output
  // keeps every position's: the LM head then runs for that row alone.
  const bool lastRowOnly = generation.maxNew > 0 && options.output.empty();
  tmr::AlignedVector<float> output;
  if (!session->run(tokens, segments, &output, &error, lastRowOnly))
    return reportError(error);
  int64_t rows = desc->output_rows ? desc->output_rows : numTokens;
  std::vector<int32_t> generated;
  if (generation.maxNew > 0) {
    std::vector<float> last(output.end() - desc->output_width, output.end());
    // --output then holds every position's logits, the generated ones as the
    // decoding steps computed them: what scoring, and tests of the caches, need.
    tmr::AlignedVector<float> generatedLogits;
    bool keepLogits = !options.output.empty();
    if (!tmr::generate(*session, last, generation, &generated, &error,
                       keepLogits ? &generatedLogits : nullptr))
      return reportError(error);
    if (keepLogits) {
      output.insert(output.end(), generatedLogits.begin(), generatedLogits.end());
      rows += static_cast<int64_t>(generated.size());
    }
  }
  // Done with its caches: --bench runs a session of its own, and its peak RSS should
  // count one session's memory, as a user's process holds.
  session.reset();
  const int64_t maxNew = generation.maxNew;

  if (!options.output.empty()) {
    if (!tmr::writeNpyF32(options.output, {1, rows, desc->output_width}, output.data(), &error))
      return reportError(error);
    if (!options.json)
      std::printf("wrote %s: f32 [1, %lld, %lld]\n", options.output.c_str(), (long long)rows,
                  (long long)desc->output_width);
  } else if (!options.json && maxNew == 0) {
    printSummary(output, rows, desc->output_width, *desc);
  }
  tmr::BenchResult bench;
  if (options.bench) {
    tmr::BenchInputs inputs{tokens, segments, source, length, maxNew,
                            static_cast<int>(benchRuns)};
    if (!tmr::benchmark(*desc, pointers, prepared, static_cast<int32_t>(threads), inputs,
                        &bench, &error))
      return reportError(error);
  }
  double tokensPerSecond = bench.decodeMs > 0 ? 1000.0 / bench.decodeMs : 0.0;
  if (options.json) {
    std::string timing;
    if (options.bench)
      timing = ", \"prefill_ms\": " + std::to_string(bench.prefillMs) +
               (bench.decodeSteps > 0
                    ? ", \"prefill_last_row_ms\": " + std::to_string(bench.lastRowPrefillMs)
                    : std::string()) +
               ", \"decode_ms\": " + std::to_string(bench.decodeMs) +
               (bench.decodeSteps > 0
                    ? ", \"decode_p10_ms\": " + std::to_string(bench.decodeP10Ms) +
                          ", \"decode_p90_ms\": " + std::to_string(bench.decodeP90Ms)
                    : std::string()) +
               ", \"tokens_per_second\": " + std::to_string(tokensPerSecond) +
               ", \"peak_rss_bytes\": " + std::to_string(bench.peakRssBytes) + memoryJson(handle);
    std::printf("{\"model\": \"%s\", \"isa\": \"%s\", \"prompt\": %s, \"generated\": %s%s}\n",
                desc->name, compiledIsa(), joinIds(tokens, ", ", "[", "]").c_str(),
                joinIds(generated, ", ", "[", "]").c_str(), timing.c_str());
  } else if (maxNew > 0) {
    std::printf("generated: %s\n", joinIds(generated, " ", "", "").c_str());
  }
  if (options.bench && !options.json) {
    std::printf("bench: prefill %.3f ms (%lld tokens", bench.prefillMs,
                static_cast<long long>(numTokens));
    if (bench.decodeSteps > 0)
      std::printf("; %.3f ms for the last row's logits alone, as generation runs it), decode "
                  "%.3f ms/token (%.1f tokens/s)",
                  bench.lastRowPrefillMs, bench.decodeMs, tokensPerSecond);
    else
      std::printf(")");
    std::printf(", peak RSS %.1f MB, isa %s\n", static_cast<double>(bench.peakRssBytes) / 1e6,
                compiledIsa());
  }
  if (tokenizer && maxNew > 0 && !options.json) {
    size_t dropped = 0;
    std::string text = tokenizer->decodeKnown(generated, &dropped);
    std::printf("text: %s\n", text.c_str());
    if (dropped > 0)
      std::fprintf(stderr,
                   "warning: %zu generated token(s) are ids --tokenizer %s lacks (its vocabulary "
                   "has %lld ids, the model's %lld): left out of the text; 'generated' lists "
                   "them\n",
                   dropped, options.tokenizer.c_str(),
                   static_cast<long long>(tokenizer->vocabSize()),
                   static_cast<long long>(desc->vocab));
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // Past the file-size limit (`ulimit -f`), --output's write would raise
  // SIGXFSZ and kill the process, leaving its temporary file behind; ignored,
  // the write fails with EFBIG and is reported, naming the file.
  std::signal(SIGXFSZ, SIG_IGN);
  // Allocation failure for a huge output, or anything else thrown, must still
  // end in a message rather than std::terminate.
  try {
    return runMain(argc, argv);
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "error: out of memory: the model's weights, caches and activations do "
                         "not fit in this machine's memory (`tmc check` estimates them)\n");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "error: unexpected failure\n");
  }
  return 1;
}
