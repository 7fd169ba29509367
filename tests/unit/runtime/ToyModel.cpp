//===- ToyModel.cpp - A fake generated executor for testing main() --------===//
//
// Stands in for the compiler's executor: its "forward pass" is an embedding
// lookup plus a bias, so the test can predict every output value, and it
// re-checks the arguments main() hands it, the way a real executor relies on
// them.
//
//===----------------------------------------------------------------------===//
#include "runtime/tmr_abi.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace {

// TOY_DECODER builds a generating model: its output is one row of logits per
// token (so the width is the vocabulary) and it has a cache, so main() runs
// --max-new through decoding steps; tests of generation and of a full cache
// need one.
#ifdef TOY_DECODER
constexpr int64_t kVocab = 10, kMaxSeq = 6, kWidth = kVocab;
#else
constexpr int64_t kVocab = 10, kMaxSeq = 6, kWidth = 3;
#endif

const tmr_tensor_desc kTensors[] = {
    {"embed.tokens", 2, {kVocab, kWidth}, TMR_F32},
    {"out.bias", 1, {kWidth}, TMR_F32},
};

int run(const tmr_run_args *args, char *err, size_t errLen) {
  if (args->num_tokens < 1 || args->offset + args->num_tokens > kMaxSeq) {
    std::snprintf(err, errLen, "toy: bad num_tokens %lld", (long long)args->num_tokens);
    return 1;
  }
  // Lets the test exercise main()'s handling of a failing run.
  if (args->num_threads == 3) {
    std::snprintf(err, errLen, "toy: failure requested with 3 threads");
    return 1;
  }
  // Lets a test change the weight file under a running model at a known
  // point: the process stops itself once the weights are open and checked,
  // before its first run reads them, and goes on when the test sends SIGCONT.
  static bool stopped = false;
  if (!stopped && std::getenv("TOY_STOP_BEFORE_RUN")) {
    stopped = true;
    std::raise(SIGSTOP);
  }
  const float *embed = static_cast<const float *>(args->weights[0]); // [vocab, width]
  const float *bias = static_cast<const float *>(args->weights[1]);  // [width]
  // With last_row_only, the last token's row alone, at row 0 (tmr_abi.h).
  const int64_t first = args->last_row_only ? args->num_tokens - 1 : 0;
  for (int64_t t = 0; t < args->num_tokens; ++t) {
    int32_t token = args->tokens[t];
    if (token < 0 || token >= kVocab) {
      std::snprintf(err, errLen, "toy: bad token %d", token);
      return 1;
    }
    for (int64_t j = 0; t >= first && j < kWidth; ++j)
      args->output[(t - first) * kWidth + j] = embed[token * kWidth + j] + bias[j];
  }
  return 0;
}

// TOY_ABI_VERSION lets a second build pose as a model from another tmc.
#ifndef TOY_ABI_VERSION
#define TOY_ABI_VERSION TMR_ABI_VERSION
#endif

const tmr_model_desc kModel = {
    .abi_version = TOY_ABI_VERSION,
#ifdef TOY_DECODER
    .name = "toy_decoder",
    .output_kind = "logits",
#else
    .name = "toy",
    .output_kind = "hidden",
#endif
    .vocab = kVocab,
    .max_seq = kMaxSeq,
    .output_width = kWidth,
#ifdef TOY_DECODER
    .cache_bytes = kMaxSeq, // unused by run(); non-zero makes main() generate
#endif
    .num_tensors = 2,
    .tensors = kTensors,
    .run = run,
};

} // namespace

extern "C" const tmr_model_desc *tmr_compiled_model(void) { return &kModel; }
