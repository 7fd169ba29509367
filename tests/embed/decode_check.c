/* decode_check.c - a compiled decoder through tmr.h: cached decoding and a
 * prompt's last row alone (TMR_ROWS_LAST) against full recomputation, and a
 * reset session reproducing its first run exactly.
 *
 *   decode_check WEIGHTS [SOURCE_TOKENS...]   (an encoder-decoder takes a source)
 *
 * Prints "ok" and exits 0, or says which check failed and exits 1.
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 6

/* max |row - expected| / max |expected| over a row: the parity suite's
 * error (tests/parity/run_parity.py). A value near zero is the cancellation
 * of larger terms, so its own relative error says nothing about the kernels:
 * a logit of -0.00107 in a row up to 9.9 differed by 2e-7 (1 ulp of the
 * row's scale), 1e-4 of itself. */
static double row_error(const float *row, const float *expected, int64_t width) {
  double diff = 0, scale = 1e-6;
  for (int64_t j = 0; j < width; ++j) {
    diff = fmax(diff, fabs((double)row[j] - expected[j]));
    scale = fmax(scale, fabs((double)expected[j]));
  }
  return diff / scale;
}

static int fail(const char *what, tmr_status status) {
  fprintf(stderr, "FAIL: %s: %s: %s\n", what, tmr_status_message(status), tmr_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s WEIGHTS [SOURCE_TOKENS...]\n", argv[0]);
    return 2;
  }
  int32_t source[16];
  int num_source = 0;
  for (int i = 2; i < argc && num_source < 16; ++i)
    source[num_source++] = (int32_t)atoi(argv[i]);

  tmr_model *model;
  tmr_session *session;
  tmr_model_info info;
  tmr_status status;
  if ((status = tmr_model_open(argv[1], NULL, &model)) != TMR_OK)
    return fail("open", status);
  tmr_model_get_info(model, &info);
  if ((status = tmr_session_create(model, 0, &session)) != TMR_OK)
    return fail("session", status);
  int64_t width = info.output_width;
  int32_t tokens[2 + STEPS];
  for (int i = 0; i < 2 + STEPS; ++i)
    tokens[i] = (int32_t)((7 * i + 3) % info.vocab);
  size_t all = (size_t)((2 + STEPS) * width);
  float *full = malloc(sizeof(float) * all), *again = malloc(sizeof(float) * all);
  float *step = malloc(sizeof(float) * width);

  /* The whole sequence at once. */
  if (num_source && (status = tmr_set_source(session, source, num_source, NULL, 0)) != TMR_OK)
    return fail("set_source", status);
  if ((status = tmr_prefill(session, tokens, 2 + STEPS, TMR_ROWS_ALL, full, all)) != TMR_OK)
    return fail("full prefill", status);

  /* A 2-token prompt, then one cached step per token: the same rows. */
  if ((status = tmr_session_reset(session)) != TMR_OK)
    return fail("reset", status);
  if (num_source && (status = tmr_set_source(session, source, num_source, NULL, 0)) != TMR_OK)
    return fail("set_source", status);
  if ((status = tmr_prefill(session, tokens, 2, TMR_ROWS_LAST, step, width)) != TMR_OK)
    return fail("prompt", status);
  /* TMR_ROWS_LAST runs the LM head for that row alone: the same values. */
  double worst = row_error(step, full + width, width);
  if (!(worst <= 1e-5)) {
    fprintf(stderr,
            "FAIL: the prompt's last row alone differs from the full run's (max relative "
            "error %g)\n",
            worst);
    return 1;
  }
  for (int s = 0; s < STEPS; ++s) {
    if ((status = tmr_decode_step(session, tokens[2 + s], step, width)) != TMR_OK)
      return fail("decode_step", status);
    double error = row_error(step, full + (2 + s) * width, width);
    worst = error > worst ? error : worst;
  }
  if (!(worst <= 1e-5)) {
    fprintf(stderr, "FAIL: cached steps differ from full recomputation (max relative error %g)\n",
            worst);
    return 1;
  }
  /* The session counts the tokens its caches hold. */
  int64_t position = 0;
  tmr_session_position(session, &position);
  if (position != 2 + STEPS) {
    fprintf(stderr, "FAIL: position %lld, expected %d\n", (long long)position, 2 + STEPS);
    return 1;
  }

  /* After a reset the same input gives bit-identical output. */
  if ((status = tmr_session_reset(session)) != TMR_OK)
    return fail("reset", status);
  if (num_source && (status = tmr_set_source(session, source, num_source, NULL, 0)) != TMR_OK)
    return fail("set_source", status);
  if ((status = tmr_prefill(session, tokens, 2 + STEPS, TMR_ROWS_ALL, again, all)) != TMR_OK)
    return fail("rerun", status);
  if (memcmp(full, again, sizeof(float) * all) != 0) {
    fprintf(stderr, "FAIL: the rerun after a reset differs\n");
    return 1;
  }
  int32_t bad = (int32_t)info.vocab;
  if ((status = tmr_decode_step(session, bad, step, width)) != TMR_ERROR_OUT_OF_RANGE) {
    fprintf(stderr, "FAIL: token %d (= vocab) was not refused as out of range\n", bad);
    return 1;
  }
  printf("ok: %s: cached steps within %.2g of full recomputation; reset reruns identically\n",
         info.name, worst);
  tmr_session_destroy(session);
  tmr_model_close(model);
  free(full);
  free(again);
  free(step);
  return 0;
}
