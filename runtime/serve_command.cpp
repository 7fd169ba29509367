//===- serve_command.cpp - `MODEL serve`: flags, model, engine, server ----===//

#include "runtime/serve.h"

#include "runtime/model.h"
#include "runtime/options.h"
#include "runtime/tmr.h"
#include "runtime/tmr_capi_internal.h"

#include <cstdio>
#include <memory>

namespace tmr::serve {

namespace {

void printServeUsage(FILE *out, const std::string &program, const tmr_model_desc &desc) {
  std::fprintf(out,
               "usage: %s serve --weights W [--tokenizer DIR] [--host ADDR] [--port N]\n"
               "       [--max-batch B] [--threads N] [--max-queue N] [--max-body BYTES]\n"
               "       [--max-connections N] [--max-tokens N]\n\n"
               "Serves model '%s' over HTTP until SIGTERM or SIGINT (which finish the requests\n"
               "in flight, then exit 0). Requests that arrive while others decode join them at\n"
               "the next step (continuous batching over --max-batch slots).\n\n"
               "  POST /v1/completions  {\"prompt\": TEXT or [ids], \"max_tokens\", "
               "\"temperature\",\n"
               "                        \"top_p\", \"top_k\", \"seed\", \"stop\", "
               "\"stop_token_ids\", \"stream\",\n"
               "                        \"logprobs\", \"echo\", \"presence_penalty\", "
               "\"frequency_penalty\"}\n"
               "  POST /v1/embeddings   {\"input\": TEXT, [ids] or a list of them, \"pooling\": "
               "mean|cls|last|none}\n"
               "  POST /v1/classify     {\"input\": as above}\n"
               "  GET  /health, GET /metrics (Prometheus text)\n\n"
               "  --host ADDR           address to listen on (default 127.0.0.1)\n"
               "  --port N              0 to 65535 (default 8080; 0: any free port, printed)\n"
               "  --max-batch B         sequences decoded together, 1 to %d (default %d)\n"
               "  --threads N           threads per model call (default: the compiled count)\n"
               "  --max-queue N         requests waiting for a slot before 503 (default 256)\n"
               "  --max-body BYTES      largest request body before 413 (default 1048576)\n"
               "  --max-connections N   open connections before 503 (default 512)\n"
               "  --max-tokens N        a completion's max_tokens when it gives none "
               "(default 16)\n",
               program.c_str(), desc.name, desc.max_batch > 1 ? desc.max_batch : 256,
               desc.max_batch > 1 ? desc.max_batch : 16);
}

} // namespace

int serveCommand(int argc, char **argv, const tmr_model_desc &desc, const std::string &program) {
  using namespace tmr::cli;
  std::string weights, tokenizerDir, host, port, maxBatch, threads, maxQueue, maxBody,
      maxConnections, maxTokens, error;
  const FlagValue flags[] = {{"--weights", &weights},
                             {"--tokenizer", &tokenizerDir},
                             {"--host", &host},
                             {"--port", &port},
                             {"--max-batch", &maxBatch},
                             {"--threads", &threads},
                             {"--max-queue", &maxQueue},
                             {"--max-body", &maxBody},
                             {"--max-connections", &maxConnections},
                             {"--max-tokens", &maxTokens}};
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      printServeUsage(stdout, program, desc);
      return 0;
    }
    if (!readFlagValue(argc, argv, &i, flags, &error))
      return usageError("serve: " + error);
  }
  if (weights.empty())
    return usageError("serve: --weights FILE is required");

  ServeOptions options;
  if (!host.empty())
    options.host = host;
  const int64_t batchLimit = desc.max_batch > 1 ? desc.max_batch : 256;
  int64_t value = 0, threadCount = 0;
  auto bounded = [&](const char *flag, const std::string &text, int64_t low, int64_t high,
                     int64_t fallback, int64_t *out) {
    if (text.empty()) {
      *out = fallback;
      return true;
    }
    return parseBounded(flag, text, low, high, out, &error);
  };
  if (!bounded("--port", port, 0, 65535, 8080, &value))
    return usageError(error);
  options.port = static_cast<int>(value);
  if (!bounded("--max-batch", maxBatch, 1, batchLimit, std::min<int64_t>(batchLimit, 16), &value))
    return usageError(error + (desc.max_batch > 1 ? " (the model was compiled with --max-batch " +
                                                        std::to_string(desc.max_batch) + ")"
                                                  : ""));
  options.slots = static_cast<int32_t>(value);
  if (!bounded("--max-queue", maxQueue, 1, 1 << 20, 256, &options.maxQueue) ||
      !bounded("--max-body", maxBody, 1024, int64_t(1) << 30, 1 << 20, &options.maxBody) ||
      !bounded("--max-connections", maxConnections, 1, 65536, 512, &options.maxConnections) ||
      !bounded("--max-tokens", maxTokens, 1, desc.max_seq, std::min<int64_t>(16, desc.max_seq),
               &options.defaultMaxTokens) ||
      !parseThreads(threads, &threadCount, &error))
    return usageError(error);

  // Before any thread starts (Halide's pool at load, the engine's): every
  // thread inherits a mask that leaves SIGTERM and SIGINT to the server's
  // signal thread, which drains instead of dying.
  blockShutdownSignals();
  std::unique_ptr<Tokenizer> tokenizer;
  if (!tokenizerDir.empty()) {
    tokenizer = Tokenizer::open(tokenizerDir, &error);
    if (!tokenizer) {
      printError(error);
      return kExitFailure;
    }
    if (tokenizer->vocabSize() > desc.vocab) {
      printError("--tokenizer " + tokenizerDir + ": its vocabulary has ids up to " +
                 std::to_string(tokenizer->vocabSize() - 1) + ", the model's only up to " +
                 std::to_string(desc.vocab - 1));
      return kExitFailure;
    }
  }
  tmr_model_params params = tmr_model_default_params();
  params.threads = static_cast<int32_t>(threadCount);
  tmr_model *handle = nullptr;
  if (tmr_model_open_compiled(&desc, weights.c_str(), &params, &handle) != TMR_OK) {
    printError(tmr_last_error());
    return kExitFailure;
  }
  std::unique_ptr<tmr_model, void (*)(tmr_model *)> model(handle, tmr_model_close);
  const Model &opened = modelOf(handle);
  for (const std::string &warning : opened.warnings())
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  Engine engine(desc, opened.weights(), opened.prepared(), options.slots,
                static_cast<int32_t>(threadCount), options.maxQueue);
  return runServer(engine, desc, tokenizer.get(), options);
}

} // namespace tmr::serve
