/* bench/e2e/batch_decode.c - tmc decoding many sequences at once, through runtime/tmr.h's batches.
 *
 *   tmc compile SPEC --emit=lib --max-batch 32 -o DIR/model   # DIR/libmodel.a, DIR/model.h
 *   cc -std=c99 -O2 bench/e2e/batch_decode.c -IDIR DIR/libmodel.a -lstdc++ -lm -lpthread -ldl \
 *      -o batch_decode
 *   batch_decode WEIGHTS SEQS PROMPT STEPS THREADS ROUNDS
 *
 * One batch of SEQS slots. Each round: every slot reset, SEQS different prompts of PROMPT
 * tokens prefilled in one tmr_batch_run (TMR_ROWS_LAST: each prompt's last row of logits),
 * each row's argmax the sequence's next token; then STEPS greedy decoding steps, each one
 * tmr_batch_run of one token for every slot (the model's linears multiply the SEQS rows as
 * one GEMM) and the argmax of every row. The prefill and every step are timed whole, the
 * argmaxes included (llama.cpp's steps in bench/peers/llama_batch_runner.mjs end in its
 * greedy sampler too), with clock_gettime(CLOCK_MONOTONIC). Round 0 warms up (caches
 * allocated, pages resident) and is not reported; then ROUNDS rounds are. Prints one JSON
 * line:
 *
 *   {"seqs", "threads", "prompt", "steps", "max_batch", "prefill_ms": [per round],
 *    "step_ms": [every step of every reported round but each round's first],
 *    "tokens": [sequence 0's greedy tokens in the last round: the prefill's, then each
 *    step's], "peak_rss_bytes"}
 *
 * Each round's first step is left out as llama.cpp's is (its first step after a prompt
 * rebuilds its graph; llama-bench's "tg" does the same). Sequence s's prompt is the same
 * 31-bit LCG stream as the llama.cpp runner's (promptOf there): distinct per sequence,
 * deterministic, in [0, vocab). Every tmr call is checked; a failure prints
 * tmr_last_error() and exits 1.
 */
#define _POSIX_C_SOURCE 200112L

#include "model.h"

#define HARNESS_NAME "batch_decode"
#include "bench_harness.h"

#include <string.h>

static int32_t argmax(const float *row, int64_t width) {
  int64_t best = 0;
  for (int64_t i = 1; i < width; ++i)
    if (row[i] > row[best])
      best = i;
  return (int32_t)best;
}

static void print_array(const char *name, const double *values, size_t count) {
  printf("\"%s\": [", name);
  for (size_t i = 0; i < count; ++i)
    printf(i ? ", %.4f" : "%.4f", values[i]);
  printf("]");
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: %s WEIGHTS SEQS PROMPT STEPS THREADS ROUNDS\n", argv[0]);
    return 2;
  }
  const char *weights = argv[1];
  int32_t seqs = (int32_t)argument(argv[2], "SEQS", 1, 65536);
  int64_t prompt = argument(argv[3], "PROMPT", 1, 1L << 30);
  int64_t steps = argument(argv[4], "STEPS", 1, 1L << 30);
  int32_t threads = (int32_t)argument(argv[5], "THREADS", 0, 4096);
  long rounds = argument(argv[6], "ROUNDS", 1, 1L << 20);

  tmr_model_params params = tmr_model_default_params();
  params.threads = threads;
  tmr_model *model = NULL;
  CHECK(tmr_model_open(weights, &params, &model));
  tmr_model_info info;
  CHECK(tmr_model_get_info(model, &info));
  if (info.kind != TMR_MODEL_DECODER || info.output_kind != TMR_OUTPUT_LOGITS) {
    fprintf(stderr, "batch_decode: model %s is not a decoder with an LM head\n", info.name);
    return 1;
  }
  if (prompt + steps > info.max_seq) {
    fprintf(stderr, "batch_decode: PROMPT %lld + STEPS %lld exceed max_seq %lld\n",
            (long long)prompt, (long long)steps, (long long)info.max_seq);
    return 1;
  }
  warn_split(seqs, info.max_batch, "sequences");
  tmr_batch *batch = NULL;
  CHECK(tmr_batch_create(model, seqs, threads, &batch));

  const int64_t vocab = info.vocab, width = info.output_width;
  int32_t *prompts = allocate(sizeof(int32_t) * (size_t)(seqs * prompt));
  for (int32_t s = 0; s < seqs; ++s)
    prompt_of(s, prompts + s * prompt, prompt, vocab);
  int32_t *next = allocate(sizeof(int32_t) * (size_t)seqs);  /* each row's argmax */
  int32_t *input = allocate(sizeof(int32_t) * (size_t)seqs); /* a step's tokens */
  size_t output_floats = (size_t)seqs * (size_t)width;
  float *output = allocate(sizeof(float) * output_floats);
  tmr_sequence_input *inputs = allocate(sizeof(tmr_sequence_input) * (size_t)seqs);
  double *prefill_ms = allocate(sizeof(double) * (size_t)rounds);
  size_t kept = steps > 1 ? (size_t)(steps - 1) : 1; /* steps reported per round */
  double *step_ms = allocate(sizeof(double) * kept * (size_t)rounds);
  int32_t *tokens = allocate(sizeof(int32_t) * (size_t)(steps + 1));
  size_t step_count = 0;

  for (long round = 0; round <= rounds; ++round) {
    for (int32_t s = 0; s < seqs; ++s)
      CHECK(tmr_batch_reset_slot(batch, s));
    for (int32_t s = 0; s < seqs; ++s) {
      inputs[s].slot = s;
      inputs[s].tokens = prompts + s * prompt;
      inputs[s].num_tokens = prompt;
      inputs[s].segments = NULL;
      inputs[s].length = 0;
    }
    double start = now_ms();
    CHECK(tmr_batch_run(batch, inputs, seqs, TMR_ROWS_LAST, output, output_floats));
    for (int32_t s = 0; s < seqs; ++s)
      next[s] = argmax(output + (size_t)s * (size_t)width, width);
    double elapsed = now_ms() - start;
    if (round > 0)
      prefill_ms[round - 1] = elapsed;
    tokens[0] = next[0];

    for (int64_t step = 0; step < steps; ++step) {
      for (int32_t s = 0; s < seqs; ++s) {
        input[s] = next[s];
        inputs[s].tokens = input + s;
        inputs[s].num_tokens = 1;
      }
      start = now_ms();
      CHECK(tmr_batch_run(batch, inputs, seqs, TMR_ROWS_LAST, output, output_floats));
      for (int32_t s = 0; s < seqs; ++s)
        next[s] = argmax(output + (size_t)s * (size_t)width, width);
      elapsed = now_ms() - start;
      if (round > 0 && (step > 0 || steps == 1))
        step_ms[step_count++] = elapsed;
      tokens[step + 1] = next[0];
    }
    int64_t position = 0;
    CHECK(tmr_batch_position(batch, 0, &position));
    if (position != prompt + steps) {
      fprintf(stderr, "batch_decode: slot 0 holds %lld tokens after the round, expected %lld\n",
              (long long)position, (long long)(prompt + steps));
      return 1;
    }
  }

  printf("{\"seqs\": %d, \"threads\": %d, \"prompt\": %lld, \"steps\": %lld, \"max_batch\": %d, ",
         seqs, threads, (long long)prompt, (long long)steps, info.max_batch);
  print_array("prefill_ms", prefill_ms, (size_t)rounds);
  printf(", ");
  print_array("step_ms", step_ms, step_count);
  printf(", \"tokens\": [");
  for (int64_t i = 0; i <= steps; ++i)
    printf(i ? ", %d" : "%d", tokens[i]);
  printf("], \"peak_rss_bytes\": %lld}\n", peak_rss_bytes());

  tmr_batch_destroy(batch);
  tmr_model_close(model);
  free(prompts);
  free(next);
  free(input);
  free(output);
  free(inputs);
  free(prefill_ms);
  free(step_ms);
  free(tokens);
  return 0;
}
