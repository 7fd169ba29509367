//===- serve_engine.h - Continuous batching over a model's slots -*- C++ -*-===//
//
// The scheduler behind `MODEL serve` and `MODEL --batch-input`: jobs (a
// prompt to continue, or an input to encode) wait in a bounded queue; one
// thread owns a Batch (batch.h) and, at every step, admits waiting jobs into
// free slots and runs one batched call over all of them: new prompts whole,
// every active sequence's last token. Generated tokens are sampled per job
// (its own seeded Sampler) and handed to the job as they come, so a client
// can stream them. A cancelled job (its client went away) leaves its slot
// at the next step. A job's tokens do not depend on the jobs beside it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/aligned.h"
#include "runtime/batch.h"
#include "runtime/sampling.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tmr::serve {

/// A generated token's log-probability under the model (the log-softmax of
/// its step's logits, before temperature or top-k/p) and those of the
/// likeliest ids, likeliest first: OpenAI's completions `logprobs`.
struct TokenLogprobs {
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;
};

/// One request's work and its results, shared by the client that waits for
/// it and the engine that computes it.
class Job {
public:
  enum class Kind { Generate, Encode };
  Kind kind = Kind::Generate;
  std::vector<int32_t> tokens;   ///< the prompt, or the input to encode
  /// An encoder-decoder's source, which `segments` and `length` then label.
  std::vector<int32_t> source;
  std::vector<int32_t> segments; ///< Encode: per token, or empty (all 0)
  int64_t length = 0;            ///< Encode: valid tokens; 0: all
  /// Generate: tokens to add at most, how to choose them, and the ids that
  /// end a sequence (returned, then the job finishes with "stop").
  int64_t maxTokens = 16;
  SamplingOptions sampling;
  std::vector<int32_t> stopTokens;
  /// Generate: >= 0 keeps each token's TokenLogprobs with that many of the
  /// likeliest ids; -1 keeps none.
  int32_t logprobs = -1;
  /// Generate: also keep the TokenLogprobs of the prompt's tokens after its
  /// first (OpenAI's echo with logprobs); maxTokens may then be 0.
  bool echo = false;

  /// Client side: waits until the job has more than `seen` tokens or is
  /// done, or `timeout` passes; copies the tokens after `seen`.
  void wait(size_t seen, std::vector<int32_t> *more, bool *done, std::chrono::milliseconds timeout);
  /// Client side: the client is gone; the engine frees the job's slot.
  void cancel() { cancelled = true; }
  bool isCancelled() const { return cancelled; }

  /// Once done: "length" (maxTokens or max_seq reached), "stop" (a stop
  /// token), "cancelled", or "error" with error().
  std::string finishReason() const;
  std::string error() const;
  std::vector<int32_t> generated() const;
  /// The TokenLogprobs of generated tokens [from, to) (logprobs >= 0).
  std::vector<TokenLogprobs> logprobsOf(size_t from, size_t to) const;
  /// Once prefilled, with echo and logprobs >= 0: those of prompt tokens 1..
  std::vector<TokenLogprobs> promptLogprobs() const;
  /// Encode: the output rows ([rows, width]).
  std::vector<float> output() const;
  std::chrono::steady_clock::time_point submitted = std::chrono::steady_clock::now();

private:
  friend class Engine;
  void push(int32_t token, std::optional<TokenLogprobs> logprobs = std::nullopt);
  void setPromptLogprobs(std::vector<TokenLogprobs> values);
  void finish(std::string reason, std::string message = "", std::vector<float> rows = {});

  std::atomic<bool> cancelled{false};
  mutable std::mutex mutex;
  std::condition_variable changed;
  std::vector<int32_t> produced;
  std::vector<TokenLogprobs> producedLogprobs, promptLogprobs_;
  std::vector<float> rows;
  bool done = false;
  std::string reason, message;
};

/// What /metrics reports.
struct EngineStats {
  int64_t jobsDone = 0, jobsFailed = 0, jobsCancelled = 0;
  int64_t promptTokens = 0, generatedTokens = 0, steps = 0;
  int64_t queued = 0, active = 0, slots = 0;
  /// Steps by how many sequences they carried: stepsBySize[n] for n sequences.
  std::vector<int64_t> stepsBySize;
};

class Engine {
public:
  /// `slots` sequences at once (<= the model's max_batch where it batches,
  /// else any: they then run one by one); at most `maxQueued` jobs wait.
  Engine(const tmr_model_desc &desc, const std::vector<const void *> &weights, const void *prepared,
         int32_t slots, int32_t threads, int64_t maxQueued);
  ~Engine();
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  /// Queues `job`; false + *why when the queue is full or the engine drains.
  bool submit(std::shared_ptr<Job> job, std::string *why);
  /// Stops taking jobs, finishes every one queued or running, then returns.
  void drain();
  EngineStats stats() const;

private:
  struct Active {
    std::shared_ptr<Job> job;
    int32_t slot = 0;
    bool prefilled = false;
    std::optional<Sampler> sampler;
    int32_t last = 0;      ///< the token the next step runs
    int64_t generated = 0; ///< tokens given to the job so far
  };
  void loop();
  /// Moves waiting jobs into free slots; drops cancelled ones.
  void admit(std::vector<Active> *active, std::vector<int32_t> *freeSlots);
  /// One batched call over `active`; finishes the jobs it completes.
  void step(std::vector<Active> *active, std::vector<int32_t> *freeSlots);

  const tmr_model_desc &desc;
  Batch batch;
  const int64_t maxQueued;
  mutable std::mutex mutex;
  std::condition_variable wake, idle;
  std::deque<std::shared_ptr<Job>> queue;
  bool draining = false, stopped = false;
  EngineStats counters;
  std::thread worker;
};

} // namespace tmr::serve
