/* batch_check.c - a compiled model's batches through tmr.h against sessions:
 * every output of tmr_batch_run equals, value for value, the same sequence
 * run alone in a session; slots join and leave between runs; bad inputs are
 * refused naming the input.
 *
 *   batch_check WEIGHTS
 *
 * A decoder: five prompts of different lengths prefilled together (all rows
 * and last rows), then decoding steps where slots leave and a new sequence
 * joins mid-way. An encoder: a ragged batch with a padded input. An
 * encoder-decoder: as a decoder, each sequence decoding from a source of its
 * own (one padded), the new ones' sources encoded together. Prints "ok" and
 * exits 0, or says which check failed and exits 1.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEQS 5
#define STEPS 4

static int fail(const char *what, tmr_status status) {
  fprintf(stderr, "FAIL: %s: %s: %s\n", what, tmr_status_message(status), tmr_last_error());
  return 1;
}

static int32_t token(int s, int t, int64_t vocab) {
  return (int32_t)((s * 131 + t * 17 + 3) % vocab);
}

/* An encoder-decoder's sequences: sources of their own, the third padded. */
static int32_t sources[6][24];
static int64_t sourceCounts[6], sourceLengths[6];

/* A new session for sequence s (an encoder-decoder's: with its source). */
static tmr_status start(tmr_model *model, const tmr_model_info *info, int s,
                        tmr_session **session) {
  tmr_status status = tmr_session_create(model, 0, session);
  if (status == TMR_OK && info->kind == TMR_MODEL_ENCODER_DECODER)
    status = tmr_set_source(*session, sources[s], sourceCounts[s], NULL, sourceLengths[s]);
  return status;
}

/* Rows of sequence s alone, through a session: `count` tokens, all rows. */
static tmr_status alone(tmr_model *model, const tmr_model_info *info, int s, const int32_t *tokens,
                        int64_t count, int64_t length, float *out) {
  tmr_session *session;
  tmr_status status = start(model, info, s, &session);
  if (status != TMR_OK)
    return status;
  int64_t rows = info->output_rows ? info->output_rows : count;
  size_t floats = (size_t)(rows * info->output_width);
  status = info->kind == TMR_MODEL_ENCODER
               ? tmr_encode(session, tokens, count, NULL, length, TMR_ROWS_ALL, out, floats)
               : tmr_prefill(session, tokens, count, TMR_ROWS_ALL, out, floats);
  tmr_session_destroy(session);
  return status;
}

static int same(const float *a, const float *b, size_t n, const char *what) {
  if (memcmp(a, b, n * sizeof(float)) != 0) {
    for (size_t i = 0; i < n; ++i)
      if (a[i] != b[i]) {
        fprintf(stderr, "FAIL: %s: value %zu is %.9g in the batch, %.9g alone\n", what, i,
                (double)a[i], (double)b[i]);
        break;
      }
    return 0;
  }
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s WEIGHTS\n", argv[0]);
    return 2;
  }
  tmr_model *model;
  tmr_model_info info;
  tmr_status status;
  if ((status = tmr_model_open(argv[1], NULL, &model)) != TMR_OK)
    return fail("open", status);
  tmr_model_get_info(model, &info);
  const int64_t width = info.output_width;
  const int encdec = info.kind == TMR_MODEL_ENCODER_DECODER;
  const int decoder = info.kind == TMR_MODEL_DECODER || encdec;
  int64_t lengths[SEQS];
  int32_t tokens[SEQS][64 + STEPS];
  for (int s = 0; s < SEQS; ++s) {
    lengths[s] = 1 + (s * 7) % (info.max_seq - STEPS < 40 ? info.max_seq - STEPS : 40);
    for (int t = 0; t < lengths[s] + STEPS; ++t)
      tokens[s][t] = token(s, t, info.vocab);
  }
  for (int s = 0; s <= SEQS; ++s) {
    sourceCounts[s] = 2 + (s * 5) % (info.max_seq < 24 ? info.max_seq - 2 : 22);
    sourceLengths[s] = s == 2 ? sourceCounts[s] / 2 : 0;
    for (int t = 0; t < sourceCounts[s]; ++t)
      sources[s][t] = token(s + 7, t, info.vocab);
  }
  tmr_batch *batch;
  if ((status = tmr_batch_create(model, 8, 0, &batch)) != TMR_OK)
    return fail("tmr_batch_create", status);
  float *expected = malloc(sizeof(float) * (size_t)((64 + STEPS) * width));
  float *got = malloc(sizeof(float) * (size_t)(SEQS * (64 + STEPS) * width));

  /* Ragged prompts in slots 1, 3, 4, 6, 7, every row; an encoder's third
   * input padded after half its tokens. */
  tmr_sequence_input in[SEQS];
  const int slots[SEQS] = {1, 3, 4, 6, 7};
  int64_t total = 0;
  for (int s = 0; s < SEQS; ++s) {
    in[s] = (tmr_sequence_input){slots[s], tokens[s], lengths[s], NULL,
                                 !decoder && s == 2 && lengths[s] > 1 ? lengths[s] / 2 : 0};
    total += info.output_rows ? info.output_rows : lengths[s];
    if (encdec && (status = tmr_batch_set_source(batch, slots[s], sources[s], sourceCounts[s], NULL,
                                                 sourceLengths[s])) != TMR_OK)
      return fail("tmr_batch_set_source", status);
  }
  if (encdec) { /* a new sequence needs its source; the decoder's tokens take no length */
    tmr_sequence_input none = {0, tokens[0], 1, NULL, 0};
    if (tmr_batch_run(batch, &none, 1, TMR_ROWS_ALL, NULL, 0) != TMR_ERROR_INVALID_ARGUMENT ||
        !strstr(tmr_last_error(), "needs its source"))
      return fail("a sequence without a source was not refused", TMR_OK);
    none = (tmr_sequence_input){1, tokens[0], 1, NULL, 1};
    if (tmr_batch_run(batch, &none, 1, TMR_ROWS_ALL, NULL, 0) != TMR_ERROR_INVALID_ARGUMENT ||
        !strstr(tmr_last_error(), "label its source"))
      return fail("a length on the decoder's tokens was not refused", TMR_OK);
  }
  if ((status = tmr_batch_run(batch, in, SEQS, TMR_ROWS_ALL, got, (size_t)(total * width))) !=
      TMR_OK)
    return fail("tmr_batch_run (prompts)", status);
  int64_t at = 0;
  for (int s = 0; s < SEQS; ++s) {
    int64_t rows = info.output_rows ? info.output_rows : lengths[s];
    if ((status = alone(model, &info, s, tokens[s], lengths[s], in[s].length, expected)) != TMR_OK)
      return fail("alone", status);
    char what[64];
    snprintf(what, sizeof what, "prompt %d", s);
    if (!same(got + at * width, expected, (size_t)(rows * width), what))
      return 1;
    at += rows;
  }
  if (decoder) {
    /* Decoding steps: sequence 1 leaves after the first; at the third a new
     * sequence joins in slot 0 with a whole prompt (sequence 3's tokens). A
     * step's row is compared with a session that ran the same prompt and the
     * same steps one at a time. */
    int active[SEQS] = {1, 1, 1, 1, 1};
    int64_t held[SEQS];
    tmr_session *sessions[SEQS + 1];
    for (int s = 0; s < SEQS; ++s) {
      held[s] = lengths[s];
      if ((status = start(model, &info, s, &sessions[s])) != TMR_OK ||
          (status = tmr_prefill(sessions[s], tokens[s], lengths[s], TMR_ROWS_LAST, NULL, 0)) !=
              TMR_OK)
        return fail("session", status);
    }
    if ((status = start(model, &info, SEQS, &sessions[SEQS])) != TMR_OK)
      return fail("session", status);
    for (int step = 0; step < STEPS; ++step) {
      int count = 0, which[SEQS + 1];
      if (step == 1)
        active[1] = 0; /* leaves */
      for (int s = 0; s < SEQS; ++s)
        if (active[s]) {
          in[count] = (tmr_sequence_input){slots[s], &tokens[s][held[s]], 1, NULL, 0};
          which[count++] = s;
        }
      if (step == 2) { /* joins: a new sequence in slot 0 (its source encoded now) */
        in[count] = (tmr_sequence_input){0, tokens[3], lengths[3] + 2, NULL, 0};
        which[count++] = SEQS;
        if (encdec && (status = tmr_batch_set_source(batch, 0, sources[SEQS], sourceCounts[SEQS],
                                                     NULL, 0)) != TMR_OK)
          return fail("tmr_batch_set_source", status);
      }
      if ((status = tmr_batch_run(batch, in, count, TMR_ROWS_LAST, got, (size_t)(count * width))) !=
          TMR_OK)
        return fail("tmr_batch_run (step)", status);
      for (int i = 0; i < count; ++i) {
        int s = which[i];
        status = s == SEQS
                     ? tmr_prefill(sessions[s], tokens[3], lengths[3] + 2, TMR_ROWS_LAST, expected,
                                   (size_t)width)
                     : tmr_decode_step(sessions[s], tokens[s][held[s]], expected, (size_t)width);
        if (status != TMR_OK)
          return fail("session step", status);
        char what[64];
        snprintf(what, sizeof what, "step %d, sequence %d", step, s);
        if (!same(got + i * width, expected, (size_t)width, what))
          return 1;
      }
      for (int s = 0; s < SEQS; ++s)
        if (active[s])
          ++held[s];
    }
    for (int s = 0; s <= SEQS; ++s)
      tmr_session_destroy(sessions[s]);
    int64_t position;
    tmr_batch_position(batch, 0, &position);
    if (position != lengths[3] + 2) {
      fprintf(stderr, "FAIL: slot 0 holds %lld tokens\n", (long long)position);
      return 1;
    }
    tmr_batch_reset_slot(batch, 0);
    tmr_batch_position(batch, 0, &position);
    if (position != 0) {
      fprintf(stderr, "FAIL: a reset slot holds %lld tokens\n", (long long)position);
      return 1;
    }
  }
  /* Refusals, naming the input. */
  int32_t bad = (int32_t)info.vocab;
  for (int slot = 2; encdec && slot <= 5; slot += 3)
    if ((status = tmr_batch_set_source(batch, slot, sources[0], sourceCounts[0], NULL, 0)) !=
        TMR_OK)
      return fail("tmr_batch_set_source", status);
  if (encdec && (tmr_batch_set_source(batch, 2, &bad, 1, NULL, 0) != TMR_ERROR_OUT_OF_RANGE ||
                 !strstr(tmr_last_error(), "source token")))
    return fail("a source token past vocab was not refused", TMR_OK);
  if (encdec &&
      (tmr_batch_set_source(batch, 1, sources[0], 1, NULL, 0) != TMR_ERROR_INVALID_ARGUMENT ||
       !strstr(tmr_last_error(), "reset it")))
    return fail("a source for a slot in use was not refused", TMR_OK);
  tmr_sequence_input wrong[2] = {{2, tokens[0], 1, NULL, 0}, {2, tokens[1], 1, NULL, 0}};
  if (tmr_batch_run(batch, wrong, 2, TMR_ROWS_ALL, NULL, 0) != TMR_ERROR_INVALID_ARGUMENT ||
      !strstr(tmr_last_error(), "appears twice"))
    return fail("a slot twice was not refused", TMR_OK);
  wrong[1] = (tmr_sequence_input){5, &bad, 1, NULL, 0};
  if (tmr_batch_run(batch, wrong, 2, TMR_ROWS_ALL, NULL, 0) != TMR_ERROR_OUT_OF_RANGE ||
      !strstr(tmr_last_error(), "sequence 1 (slot 5): token"))
    return fail("a token past vocab was not refused", TMR_OK);
  wrong[1] = (tmr_sequence_input){8, tokens[0], 1, NULL, 0};
  if (tmr_batch_run(batch, wrong, 2, TMR_ROWS_ALL, NULL, 0) != TMR_ERROR_OUT_OF_RANGE)
    return fail("slot 8 of 8 was not refused", TMR_OK);
  tmr_batch_destroy(batch);
  tmr_model_close(model);
  free(expected);
  free(got);
  printf("ok: %d sequences batched, each equal to its session\n", SEQS);
  return 0;
}
