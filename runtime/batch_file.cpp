//===- batch_file.cpp - `MODEL --batch-input FILE`: many inputs, one command -===//
//
// Every line of the input file is one JSON object: {"tokens": [ids]} or
// {"prompt": "text"} (with --tokenizer), and optionally "segments",
// "length" (an encoder's valid prefix), "max_new" and "seed". An
// encoder-decoder's line also gives its source, {"source_tokens": [ids]} or
// {"source": "text"}, which "segments" and "length" then label. All lines are
// checked first (an error names FILE:LINE and the field); then they run on
// the continuous-batching engine, --max-batch at a time, with a progress
// bar on a terminal. Results come out in input order: JSON lines (to
// --output FILE.jsonl, or stdout) or, without generation, a .npy of
// [inputs, rows, width] whose shorter inputs are padded with zero rows.
//
//===----------------------------------------------------------------------===//

#include "runtime/serve.h"

#include "runtime/atomic_file.h"
#include "runtime/npy.h"
#include "runtime/options.h"
#include "runtime/serve_routes.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>

#include <unistd.h>

namespace tmr::serve {

using nlohmann::json;

namespace {

/// The ids a line gives in one of two fields, `idsField` (an array of ids) or
/// `textField` (text, through the tokenizer); nullopt + *error naming them
/// (`why` ends the message when neither or both are given).
std::optional<std::vector<int32_t>> idsOf(const json &value, const char *idsField,
                                          const char *textField, const char *why,
                                          const tmr_model_desc &desc, const Tokenizer *tokenizer,
                                          std::string *error) {
  const bool hasIds = value.contains(idsField), hasText = value.contains(textField);
  if (hasIds == hasText) {
    *error = std::string("give \"") + idsField + "\" (ids) or \"" + textField +
             "\" (text), one of them" + why;
    return std::nullopt;
  }
  const char *field = hasText ? textField : idsField;
  const json &input = value[field];
  if (hasText ? !input.is_string() : !input.is_array()) {
    *error = "\"" + std::string(field) +
             (hasText ? "\" must be a string" : "\" must be an array of token ids");
    return std::nullopt;
  }
  return tokensFromJson(input, "\"" + std::string(field) + "\"", desc, tokenizer, error);
}

/// The fields of an input line.
const std::string kLineFields[] = {"tokens",   "prompt", "source_tokens", "source",
                                   "segments", "length", "max_new",       "seed"};

/// Reads and checks every line into a job; false + *error naming FILE:LINE.
bool readJobs(const std::string &path, const tmr_model_desc &desc, const Tokenizer *tokenizer,
              const BatchFileOptions &options, std::vector<std::shared_ptr<Job>> *jobs,
              std::string *error) {
  std::ifstream in(path);
  if (!in) {
    *error = "--batch-input: cannot open " + path;
    return false;
  }
  std::string line;
  const bool generate = options.maxNew > 0;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    const std::string where = path + ":" + std::to_string(number) + ": ";
    json value = json::parse(line, nullptr, false);
    if (value.is_discarded() || !value.is_object()) {
      *error = where + "not a JSON object";
      return false;
    }
    // A field no run reads is refused, not ignored: a typo ("max_nwe")
    // would silently take the default, and "max_new" or "seed" on a run
    // that does not generate would change nothing.
    for (auto it = value.begin(); it != value.end(); ++it) {
      const std::string &key = it.key();
      if (std::find(std::begin(kLineFields), std::end(kLineFields), key) == std::end(kLineFields)) {
        *error = where + "unknown field \"" + key +
                 "\" (a line reads tokens or prompt, source_tokens or source, segments, length, "
                 "max_new and seed)";
        return false;
      }
      if (!generate && (key == "max_new" || key == "seed")) {
        *error = where + "\"" + key + "\" applies when generating (--max-new N)";
        return false;
      }
    }
    auto job = std::make_shared<Job>();
    job->kind = generate ? Job::Kind::Generate : Job::Kind::Encode;
    std::optional<std::vector<int32_t>> tokens =
        idsOf(value, "tokens", "prompt", "", desc, tokenizer, error);
    if (!tokens) {
      *error = where + *error;
      return false;
    }
    job->tokens = std::move(*tokens);
    if (desc.encoder_decoder) {
      std::optional<std::vector<int32_t>> source =
          idsOf(value, "source_tokens", "source",
                ": this encoder-decoder model decodes from a source", desc, tokenizer, error);
      if (!source) {
        *error = where + *error;
        return false;
      }
      job->source = std::move(*source);
    } else if (value.contains("source_tokens") || value.contains("source")) {
      *error = where + "\"" + (value.contains("source") ? "source" : "source_tokens") +
               "\" applies to an encoder-decoder model";
      return false;
    }
    // "segments" and "length" label the first stack's input: an
    // encoder-decoder's source.
    const int64_t count =
        static_cast<int64_t>(desc.encoder_decoder ? job->source.size() : job->tokens.size());
    if (auto it = value.find("segments"); it != value.end()) {
      if (!it->is_array() || static_cast<int64_t>(it->size()) != count) {
        *error = where + "\"segments\" must be an array of one id per token (" +
                 std::to_string(count) + ")";
        return false;
      }
      for (const json &id : *it) {
        int64_t limit = std::max<int64_t>(desc.segments, 1);
        if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= limit) {
          *error = where + "\"segments\" holds " + id.dump() + ", not an id in [0, " +
                   std::to_string(limit - 1) + "]";
          return false;
        }
        job->segments.push_back(id.get<int32_t>());
      }
    }
    if (auto it = value.find("length"); it != value.end()) {
      const bool decoder = desc.cache_bytes > 0 && !desc.encoder_decoder;
      if (decoder || !it->is_number_integer() || it->get<int64_t>() < 1 ||
          it->get<int64_t>() > count) {
        *error = where +
                 (decoder ? std::string("\"length\" applies to an encoder's input")
                          : "\"length\" must be an integer in [1, " + std::to_string(count) + "]");
        return false;
      }
      job->length = it->get<int64_t>();
    }
    if (generate) {
      job->maxTokens = options.maxNew;
      if (auto it = value.find("max_new"); it != value.end()) {
        if (!it->is_number_integer() || it->get<int64_t>() < 1) {
          *error = where + "\"max_new\" must be a positive integer";
          return false;
        }
        job->maxTokens = it->get<int64_t>();
      }
      const auto prompt = static_cast<int64_t>(job->tokens.size());
      if (prompt + job->maxTokens > desc.max_seq) {
        *error = where + std::to_string(prompt) + " tokens and max_new " +
                 std::to_string(job->maxTokens) + " exceed max_seq (" +
                 std::to_string(desc.max_seq) + ")";
        return false;
      }
      job->sampling = options.sampling;
      if (auto it = value.find("seed"); it != value.end()) {
        if (!it->is_number_unsigned()) {
          *error = where + "\"seed\" must be a non-negative integer";
          return false;
        }
        job->sampling.seed = it->get<uint64_t>();
      }
      if (options.stop)
        job->stopTokens.push_back(*options.stop);
    }
    jobs->push_back(std::move(job));
  }
  if (jobs->empty()) {
    *error = "--batch-input: " + path + " holds no input lines";
    return false;
  }
  return true;
}

/// A progress bar on stderr, when it is a terminal.
class Progress {
public:
  explicit Progress(size_t total) : total(total), shown(isatty(2) != 0) {}
  void update(size_t done, int64_t tokens) {
    if (!shown)
      return;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int width = 30, filled = static_cast<int>(width * done / total);
    std::fprintf(stderr, "\r[%s%s] %zu/%zu inputs, %.0f tokens/s", std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), done, total,
                 seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0);
    if (done == total)
      std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

private:
  size_t total;
  bool shown;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

} // namespace

int runBatchFile(const std::string &path, const tmr_model_desc &desc,
                 const std::vector<const void *> &weights, const void *prepared,
                 const Tokenizer *tokenizer, const BatchFileOptions &options) {
  using tmr::cli::printError;
  std::string error;
  std::vector<std::shared_ptr<Job>> jobs;
  if (!readJobs(path, desc, tokenizer, options, &jobs, &error)) {
    printError(error);
    return tmr::cli::kExitUsage;
  }
  const bool npy = options.output.size() > 4 &&
                   options.output.compare(options.output.size() - 4, 4, ".npy") == 0;
  if (npy && options.maxNew > 0) {
    printError("--output " + options.output +
               ": generated tokens go to JSON lines (a .jsonl "
               "file or stdout); .npy holds rows without --max-new");
    return tmr::cli::kExitUsage;
  }
  Engine engine(desc, weights, prepared, options.slots, options.threads,
                static_cast<int64_t>(jobs.size()));
  for (const auto &job : jobs)
    if (!engine.submit(job, &error)) {
      printError(error);
      return tmr::cli::kExitFailure;
    }
  Progress progress(jobs.size());
  int64_t tokens = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    std::vector<int32_t> none;
    for (bool done = false; !done;) {
      jobs[i]->wait(0, &none, &done, std::chrono::milliseconds(100));
      EngineStats stats = engine.stats();
      progress.update(i + (done ? 1 : 0), stats.promptTokens + stats.generatedTokens);
    }
    if (jobs[i]->finishReason() == "error") {
      printError(path + ": input " + std::to_string(i) + ": " + jobs[i]->error());
      return tmr::cli::kExitFailure;
    }
    tokens += static_cast<int64_t>(jobs[i]->tokens.size());
  }
  engine.drain();
  const int64_t width = desc.output_width;
  if (npy) {
    int64_t rows = 0;
    for (const auto &job : jobs)
      rows = std::max<int64_t>(rows, static_cast<int64_t>(job->output().size()) / width);
    std::vector<float> all(static_cast<size_t>(jobs.size() * rows * width), 0.0f);
    for (size_t i = 0; i < jobs.size(); ++i) {
      std::vector<float> out = jobs[i]->output();
      std::copy(out.begin(), out.end(),
                all.begin() + static_cast<std::ptrdiff_t>(i * rows * width));
    }
    if (!writeNpyF32(options.output, {static_cast<int64_t>(jobs.size()), rows, width}, all.data(),
                     &error)) {
      printError(error);
      return tmr::cli::kExitFailure;
    }
    std::printf("wrote %s: f32 [%zu, %lld, %lld] (%lld input tokens)\n", options.output.c_str(),
                jobs.size(), static_cast<long long>(rows), static_cast<long long>(width),
                static_cast<long long>(tokens));
    return 0;
  }
  std::string text;
  for (size_t i = 0; i < jobs.size(); ++i) {
    json line{{"index", i}, {"tokens", jobs[i]->tokens.size()}};
    if (options.maxNew > 0) {
      std::vector<int32_t> generated = jobs[i]->generated();
      line["generated"] = generated;
      line["finish_reason"] = jobs[i]->finishReason();
      if (tokenizer)
        line["text"] = tokenizer->decodeKnown(generated);
    } else {
      std::vector<float> out = jobs[i]->output();
      json rows = json::array();
      for (size_t r = 0; r * static_cast<size_t>(width) < out.size(); ++r)
        rows.push_back(
            std::vector<float>(out.begin() + static_cast<std::ptrdiff_t>(r * width),
                               out.begin() + static_cast<std::ptrdiff_t>((r + 1) * width)));
      line["output"] = std::move(rows);
    }
    text += line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  }
  if (options.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  std::unique_ptr<AtomicFile> file = AtomicFile::create(options.output, &error);
  if (!file || !file->write(text.data(), text.size(), &error) || !file->commit(&error)) {
    printError(error);
    return tmr::cli::kExitFailure;
  }
  std::printf("wrote %s: %zu lines\n", options.output.c_str(), jobs.size());
  return 0;
}

} // namespace tmr::serve
