/* main.c - a C program that embeds a model compiled by tmc.
 *
 *   tmc compile MODEL.tm --emit=lib -o build/model   # build/libmodel.a, build/model.h
 *   cc -std=c99 -O2 main.c -Ibuild build/libmodel.a -lstdc++ -lm -lpthread -ldl -o embed
 *   ./embed WEIGHTS.safetensors 1,2,3 [MAX_NEW] [SOURCE_TOKENS]
 *
 * A decoder with an LM head generates MAX_NEW tokens greedily (prefill the
 * prompt, then one decoding step per token); an encoder-decoder decodes from
 * SOURCE_TOKENS first. Any other model runs once and its output is printed.
 * The output lines match the standalone executable's for the same input.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses "1,2,3" into a malloc'ed array; returns the count (0 on bad input). */
static int64_t parse_ids(const char *text, int32_t **ids) {
  int64_t count = 1;
  for (const char *p = text; *p; ++p)
    count += *p == ',';
  *ids = malloc(sizeof(int32_t) * (size_t)count);
  if (!*ids)
    return 0;
  const char *p = text;
  for (int64_t i = 0; i < count; ++i) {
    char *end;
    long value = strtol(p, &end, 10);
    if (end == p || (*end != ',' && *end != '\0'))
      return 0;
    (*ids)[i] = (int32_t)value;
    p = end + 1;
  }
  return count;
}

static int64_t argmax(const float *row, int64_t width) {
  int64_t best = 0;
  for (int64_t i = 1; i < width; ++i)
    if (row[i] > row[best])
      best = i;
  return best;
}

/* The executable's summary: the first 4 rows and 8 values of each. */
static void print_output(const float *output, int64_t rows, int64_t width, const char *kind) {
  printf("output: f32 [1, %lld, %lld] (%s)\n", (long long)rows, (long long)width, kind);
  for (int64_t r = 0; r < rows && r < 4; ++r) {
    printf("  [%lld]", (long long)r);
    for (int64_t c = 0; c < width && c < 8; ++c)
      printf(" %.6g", output[r * width + c]);
    printf(width > 8 ? " ... (%lld values)\n" : "\n", (long long)width);
  }
  if (rows > 4)
    printf("  ... (%lld more rows)\n", (long long)(rows - 4));
}

/* Prints the failed call's status and message; returns the exit code. */
static int report(const char *call, tmr_status status) {
  fprintf(stderr, "error: %s: %s: %s\n", call, tmr_status_message(status), tmr_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 5) {
    fprintf(stderr, "usage: %s WEIGHTS.safetensors TOKENS [MAX_NEW] [SOURCE_TOKENS]\n", argv[0]);
    return 2;
  }
  int32_t *tokens = NULL, *source = NULL;
  int64_t num_tokens = parse_ids(argv[2], &tokens);
  int64_t max_new = argc > 3 ? atoll(argv[3]) : 0;
  int64_t num_source = argc > 4 ? parse_ids(argv[4], &source) : 0;
  if (num_tokens == 0 || (argc > 4 && num_source == 0)) {
    fprintf(stderr, "error: token lists look like 1,2,3\n");
    return 2;
  }

  tmr_model *model = NULL;
  tmr_status status = tmr_model_open(argv[1], NULL, &model);
  if (status != TMR_OK)
    return report("tmr_model_open", status);
  tmr_model_info info;
  tmr_model_get_info(model, &info);
  fprintf(stderr, "model %s: vocab %lld, d_model %lld, %d layers, max_seq %lld\n", info.name,
          (long long)info.vocab, (long long)info.d_model, info.layers, (long long)info.max_seq);

  tmr_session *session = NULL;
  if ((status = tmr_session_create(model, 0, &session)) != TMR_OK)
    return report("tmr_session_create", status);
  int64_t rows = info.output_rows ? info.output_rows : num_tokens;
  size_t floats = (size_t)(rows * info.output_width);
  float *output = malloc(sizeof(float) * floats);
  if (!output)
    return 1;

  if (info.kind == TMR_MODEL_ENCODER) {
    if ((status = tmr_encode(session, tokens, num_tokens, NULL, 0, TMR_ROWS_ALL, output,
                             floats)) != TMR_OK)
      return report("tmr_encode", status);
    print_output(output, rows, info.output_width,
                 info.output_kind == TMR_OUTPUT_CLASSES ? "classes" : "hidden");
  } else {
    if (info.kind == TMR_MODEL_ENCODER_DECODER &&
        (status = tmr_set_source(session, source, num_source, NULL, 0)) != TMR_OK)
      return report("tmr_set_source", status);
    if ((status = tmr_prefill(session, tokens, num_tokens, TMR_ROWS_ALL, output, floats)) !=
        TMR_OK)
      return report("tmr_prefill", status);
    if (max_new == 0 || info.output_kind != TMR_OUTPUT_LOGITS) {
      print_output(output, rows, info.output_width,
                   info.output_kind == TMR_OUTPUT_LOGITS ? "logits" : "hidden");
    } else {
      /* Greedy: the most likely next token, fed back one decoding step at a time. */
      const float *logits = output + (rows - 1) * info.output_width;
      printf("generated:");
      for (int64_t step = 0; step < max_new; ++step) {
        int32_t next = (int32_t)argmax(logits, info.output_width);
        printf(" %d", next);
        if (step + 1 == max_new)
          break;
        if ((status = tmr_decode_step(session, next, output, floats)) != TMR_OK)
          return report("tmr_decode_step", status);
        logits = output;
      }
      printf("\n");
    }
  }
  tmr_session_destroy(session);
  tmr_model_close(model);
  free(output);
  free(tokens);
  free(source);
  return 0;
}
