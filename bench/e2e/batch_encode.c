/* bench/e2e/batch_encode.c - tmc encoding many inputs at once, through runtime/tmr.h's batches.
 *
 *   tmc compile SPEC --emit=lib --max-batch 32 -o DIR/model   # DIR/libmodel.a, DIR/model.h
 *   cc -std=c99 -O2 bench/e2e/batch_encode.c -IDIR DIR/libmodel.a -lstdc++ -lm -lpthread -ldl \
 *      -o batch_encode
 *   batch_encode WEIGHTS SEQS TOKENS THREADS ROUNDS [OUTPUT.f32]
 *
 * One batch of SEQS slots of an encoder. Each round is one tmr_batch_run of SEQS inputs of
 * TOKENS tokens each (segments NULL: all 0; length 0: no padding), TMR_ROWS_ALL, timed whole
 * with clock_gettime(CLOCK_MONOTONIC): the model's linears multiply the rows of the inputs
 * one executor call carries as one GEMM, attention runs per input. Round 0 warms up (arena
 * and output pages resident, weights touched) and is not reported; then ROUNDS rounds are.
 * Prints one JSON line:
 *
 *   {"seqs", "threads", "tokens", "ms": [per reported round], "max_batch", "max_seq",
 *    "rows_per_input", "width", "output_floats", "executor_calls", "sequences_per_call",
 *    "ids_sum", "checksum", "head": [the output's first values], "same_every_round",
 *    "peak_rss_bytes"}
 *
 * rows_per_input x width floats per input (an encoder's hidden states: TOKENS x d_model; a
 * classifier: 1 x classes). max_batch is the library's (tmr_model_info.max_batch): 1 where the
 * compiler does not batch the model (compiler/ExecutorCalls.cpp, batchable: none whose output
 * has fixed rows, such as a classifier), whose runs then carry one input per executor call
 * whatever --max-batch said. executor_calls and sequences_per_call are not measured: they are
 * what runtime/batch.cpp's Batch::run does with this batch (consecutive inputs share a call
 * while there are at most max_batch of them and their rows fit max(max_seq, max_batch) rows of
 * arena), computed here by the same rule. ids_sum is the sum of every input id, for the
 * driver to check it fed the peer the same ids; checksum is the sum of the last round's
 * output (in double); same_every_round says whether every reported round's output equals
 * the warm-up round's bit for bit. OUTPUT.f32, if given, receives the last round's whole
 * output as raw native-endian f32 ([SEQS, rows_per_input, width]) for the driver's parity
 * check.
 *
 * Input s's ids are the 31-bit LCG stream of batch_decode.c's prompt_of (x <- 1103515245 x
 * + 12345 mod 2^31 from x = 7919 s + 1, each id (x >> 8) mod vocab): distinct per input,
 * deterministic, in [0, vocab); bench/e2e/batch_encode.py's ids_of computes the same. Every
 * tmr call is checked; a failure prints tmr_last_error() and exits 1.
 */
#define _POSIX_C_SOURCE 200112L

#include "model.h"

#define HARNESS_NAME "batch_encode"
#include "bench_harness.h"

#include <math.h>
#include <string.h>

static void print_number(double value) {
  if (isfinite(value))
    printf("%.9g", value);
  else
    printf("null");
}

static void print_array(const char *name, const double *values, size_t count) {
  printf("\"%s\": [", name);
  for (size_t i = 0; i < count; ++i)
    printf(i ? ", %.4f" : "%.4f", values[i]);
  printf("]");
}

int main(int argc, char **argv) {
  if (argc != 6 && argc != 7) {
    fprintf(stderr, "usage: %s WEIGHTS SEQS TOKENS THREADS ROUNDS [OUTPUT.f32]\n", argv[0]);
    return 2;
  }
  const char *weights = argv[1];
  int32_t seqs = (int32_t)argument(argv[2], "SEQS", 1, 65536);
  int64_t tokens = argument(argv[3], "TOKENS", 1, 1L << 30);
  int32_t threads = (int32_t)argument(argv[4], "THREADS", 0, 4096);
  long rounds = argument(argv[5], "ROUNDS", 1, 1L << 20);
  const char *output_path = argc == 7 ? argv[6] : NULL;

  tmr_model_params params = tmr_model_default_params();
  params.threads = threads;
  tmr_model *model = NULL;
  CHECK(tmr_model_open(weights, &params, &model));
  tmr_model_info info;
  CHECK(tmr_model_get_info(model, &info));
  if (info.kind != TMR_MODEL_ENCODER) {
    fprintf(stderr, "batch_encode: model %s is not an encoder\n", info.name);
    return 1;
  }
  if (tokens > info.max_seq) {
    fprintf(stderr, "batch_encode: TOKENS %lld exceed max_seq %lld\n", (long long)tokens,
            (long long)info.max_seq);
    return 1;
  }
  warn_split(seqs, info.max_batch, "inputs");
  tmr_batch *batch = NULL;
  CHECK(tmr_batch_create(model, seqs, threads, &batch));

  /* runtime/batch.cpp's split of one run: inputs per executor call. */
  const int64_t per_call = info.max_batch > 1 ? info.max_batch : 1;
  const int64_t arena_rows = info.max_seq > per_call ? info.max_seq : per_call;
  int64_t fit = arena_rows / tokens;
  if (fit < 1)
    fit = 1;
  const int64_t sequences_per_call = fit < per_call ? fit : per_call;
  const int64_t executor_calls = (seqs + sequences_per_call - 1) / sequences_per_call;

  const int64_t vocab = info.vocab, width = info.output_width;
  const int64_t rows_per_input = info.output_rows ? info.output_rows : tokens;
  int32_t *ids = allocate(sizeof(int32_t) * (size_t)seqs * (size_t)tokens);
  long long ids_sum = 0;
  for (int32_t s = 0; s < seqs; ++s)
    prompt_of(s, ids + (size_t)s * (size_t)tokens, tokens, vocab);
  for (size_t i = 0; i < (size_t)seqs * (size_t)tokens; ++i)
    ids_sum += ids[i];
  tmr_sequence_input *inputs = allocate(sizeof(tmr_sequence_input) * (size_t)seqs);
  for (int32_t s = 0; s < seqs; ++s) {
    inputs[s].slot = s;
    inputs[s].tokens = ids + (size_t)s * (size_t)tokens;
    inputs[s].num_tokens = tokens;
    inputs[s].segments = NULL;
    inputs[s].length = 0;
  }
  size_t output_floats = (size_t)seqs * (size_t)rows_per_input * (size_t)width;
  float *output = allocate(sizeof(float) * output_floats);
  float *first = allocate(sizeof(float) * output_floats); /* the warm-up round's output */
  double *ms = allocate(sizeof(double) * (size_t)rounds);
  int same_every_round = 1;

  for (long round = 0; round <= rounds; ++round) {
    double start = now_ms();
    CHECK(tmr_batch_run(batch, inputs, seqs, TMR_ROWS_ALL, output, output_floats));
    double elapsed = now_ms() - start;
    if (round == 0)
      memcpy(first, output, sizeof(float) * output_floats);
    else {
      ms[round - 1] = elapsed;
      if (memcmp(first, output, sizeof(float) * output_floats) != 0)
        same_every_round = 0;
    }
  }

  if (output_path) {
    FILE *file = fopen(output_path, "wb");
    if (!file || fwrite(output, sizeof(float), output_floats, file) != output_floats ||
        fclose(file) != 0) {
      fprintf(stderr, "batch_encode: cannot write %s: %s\n", output_path, strerror(errno));
      return 1;
    }
  }
  double checksum = 0;
  for (size_t i = 0; i < output_floats; ++i)
    checksum += (double)output[i];

  printf("{\"seqs\": %d, \"threads\": %d, \"tokens\": %lld, ", seqs, threads, (long long)tokens);
  print_array("ms", ms, (size_t)rounds);
  printf(", \"max_batch\": %d, \"max_seq\": %lld, \"rows_per_input\": %lld, \"width\": %lld, "
         "\"output_floats\": %zu, \"executor_calls\": %lld, \"sequences_per_call\": %lld, "
         "\"ids_sum\": %lld, \"checksum\": ",
         info.max_batch, (long long)info.max_seq, (long long)rows_per_input, (long long)width,
         output_floats, (long long)executor_calls, (long long)sequences_per_call, ids_sum);
  print_number(checksum);
  printf(", \"head\": [");
  size_t head = output_floats < 8 ? output_floats : 8;
  for (size_t i = 0; i < head; ++i) {
    if (i)
      printf(", ");
    print_number((double)output[i]);
  }
  printf("], \"same_every_round\": %s, \"peak_rss_bytes\": %lld}\n",
         same_every_round ? "true" : "false", peak_rss_bytes());

  tmr_batch_destroy(batch);
  tmr_model_close(model);
  free(ids);
  free(inputs);
  free(output);
  free(first);
  free(ms);
  return 0;
}
