//===- serve.h - `MODEL serve` and `MODEL --batch-input` --------*- C++ -*-===//
//
// The two ways a compiled model runs many sequences at once, both on the
// continuous-batching engine (serve_engine.h): an HTTP server
// (serve_http.cpp, routes in serve_routes.h) and a file of inputs, one JSON
// object per line (batch_file.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/serve_engine.h"
#include "runtime/tokenizer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tmr::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;              ///< 0: any free port (printed)
  int32_t slots = 0;            ///< sequences decoded together
  int64_t maxBody = 1 << 20;    ///< bytes of a request body
  int64_t maxQueue = 256;       ///< jobs waiting for a slot
  int64_t maxConnections = 512; ///< connections open at once
  int64_t defaultMaxTokens = 16;
  int64_t idleSeconds = 60;   ///< an idle keep-alive connection closes after this
  int64_t drainSeconds = 600; ///< SIGTERM waits this long for requests in flight
};

/// Blocks SIGTERM and SIGINT in the calling thread and so in every thread
/// it starts after: runServer's signal thread takes them.
void blockShutdownSignals();

/// Serves until SIGTERM or SIGINT, then drains; returns the exit status.
int runServer(Engine &engine, const tmr_model_desc &desc, const Tokenizer *tokenizer,
              const ServeOptions &options);

/// How `--batch-input` runs.
struct BatchFileOptions {
  std::string output; ///< .jsonl, .npy or empty (stdout)
  int32_t slots = 16; ///< --max-batch
  int32_t threads = 0;
  int64_t maxNew = 0;       ///< > 0: generate (decoders with an LM head)
  SamplingOptions sampling; ///< --temperature, --top-k, --top-p, --seed
  std::optional<int32_t> stop;
};

/// `MODEL --weights W --batch-input FILE`: returns the exit status.
int runBatchFile(const std::string &path, const tmr_model_desc &desc,
                 const std::vector<const void *> &weights, const void *prepared,
                 const Tokenizer *tokenizer, const BatchFileOptions &options);

/// `MODEL serve ...`: argv after "serve". Returns the exit status.
int serveCommand(int argc, char **argv, const tmr_model_desc &desc, const std::string &program);

} // namespace tmr::serve
