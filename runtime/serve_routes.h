//===- serve_routes.h - What `MODEL serve` answers, apart from HTTP -*- C++ -*-===//
//
// The routes of the server as functions from a request (method, path, body)
// to a reply: JSON parsing and validation with errors that name the field,
// tokenization, jobs for the engine (serve_engine.h), OpenAI-style response
// bodies and server-sent events. serve_http.cpp carries them over HTTP.
//
//   POST /v1/completions  a decoder with an LM head: continue a prompt
//   POST /v1/embeddings   a model with hidden-state outputs: pooled or per token
//   POST /v1/classify     a classifier: class logits and the argmax
//   GET  /health, GET /metrics (Prometheus text)
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/serve_engine.h"
#include "runtime/tokenizer.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tmr::serve {

struct Limits {
  int64_t maxBody = 1 << 20; ///< bytes of a request body
  int64_t maxInputs = 256;   ///< inputs of one embeddings/classify request
  int64_t defaultMaxTokens = 16;
};

/// A reply: a whole body, or (stream set) server-sent events that stream()
/// produces one at a time until it returns false.
struct Reply {
  int status = 200;
  std::string contentType = "application/json";
  std::string body;
  std::function<bool(std::string *event)> stream;
  std::function<void()> cancel; ///< the client left mid-stream
};

/// Request counts and latencies for /metrics, by route.
class Metrics {
public:
  static constexpr std::array<double, 12> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                      0.5,   1,    2.5,   5,    10,  30};
  enum Route { kCompletions, kEmbeddings, kClassify, kHealth, kMetrics, kOther, kRoutes };
  void record(Route route, int status, double seconds);
  /// The Prometheus text exposition of these and `engine`'s counters.
  std::string text(const EngineStats &engine) const;

private:
  std::atomic<int64_t> requests[kRoutes][5] = {}; ///< by status class 1xx..5xx
  std::atomic<int64_t> buckets[kRoutes][kBuckets.size() + 1] = {};
  std::atomic<int64_t> microseconds[kRoutes] = {};
};

class Routes {
public:
  Routes(const tmr_model_desc &desc, Engine &engine, const Tokenizer *tokenizer, Limits limits,
         Metrics &metrics)
      : desc(desc), engine(engine), tokenizer(tokenizer), limits(limits), metrics(metrics) {}

  /// Answers one request. `clientGone` says whether the client has closed
  /// its connection: a waiting request then cancels its jobs.
  Reply handle(const std::string &method, const std::string &path, const std::string &body,
               const std::function<bool()> &clientGone);
  static Metrics::Route routeOf(const std::string &path);
  /// Stops answering with work: /health says so, work routes answer 503.
  void startDraining() { draining = true; }

private:
  Reply completions(const std::string &body, const std::function<bool()> &clientGone);
  Reply encode(const std::string &body, bool classify, const std::function<bool()> &clientGone);

  const tmr_model_desc &desc;
  Engine &engine;
  const Tokenizer *tokenizer;
  Limits limits;
  Metrics &metrics;
  std::atomic<bool> draining{false};
  std::atomic<int64_t> nextId{1};
};

/// The token ids of one input given as JSON: text (encoded with `tokenizer`,
/// its special tokens added) or an array of ids; 1 to max_seq of them, each
/// in [0, vocab). nullopt + *error, beginning with `field`, otherwise. What
/// the server's requests and `--batch-input`'s lines both read.
std::optional<std::vector<int32_t>> tokensFromJson(const nlohmann::json &input,
                                                   const std::string &field,
                                                   const tmr_model_desc &desc,
                                                   const Tokenizer *tokenizer, std::string *error);

/// A JSON error reply: {"error": {"message", "type", "param"}}.
Reply errorReply(int status, const std::string &message, const std::string &param = "");

} // namespace tmr::serve
