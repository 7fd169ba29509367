/* truncate_check.c - a compiled decoder whose weights file is truncated under
 * it, through tmr.h: the next run must fail with TMR_ERROR_IO naming the file,
 * and the program must live on (without the runtime's guard, the run's reads
 * of weights kept in the file's mapping -- norm gains, biases, embedding rows
 * -- raise SIGBUS and kill it).
 *
 *   truncate_check WEIGHTS COPY [SOURCE_TOKENS...]   (an encoder-decoder takes a source)
 *
 * Copies WEIGHTS to COPY and works on COPY. Prints "ok" and exits 0, or says
 * which check failed and exits 1.
 */
#define _POSIX_C_SOURCE 200809L
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what, tmr_status status) {
  fprintf(stderr, "FAIL: %s: %s: %s\n", what, tmr_status_message(status), tmr_last_error());
  return 1;
}

static int copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  char buffer[1 << 16];
  size_t n;
  int ok = in && out;
  while (ok && (n = fread(buffer, 1, sizeof buffer, in)) > 0)
    ok = fwrite(buffer, 1, n, out) == n;
  if (in)
    fclose(in);
  if (out && fclose(out) != 0)
    ok = 0;
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s WEIGHTS COPY [SOURCE_TOKENS...]\n", argv[0]);
    return 2;
  }
  const char *path = argv[2];
  if (!copy_file(argv[1], path)) {
    fprintf(stderr, "FAIL: cannot copy %s to %s\n", argv[1], path);
    return 1;
  }
  int32_t source[16];
  int num_source = 0;
  for (int i = 3; i < argc && num_source < 16; ++i)
    source[num_source++] = (int32_t)atoi(argv[i]);

  tmr_model *model;
  tmr_session *session;
  tmr_model_info info;
  tmr_status status;
  if ((status = tmr_model_open(path, NULL, &model)) != TMR_OK)
    return fail("open", status);
  tmr_model_get_info(model, &info);
  if ((status = tmr_session_create(model, 0, &session)) != TMR_OK)
    return fail("session", status);
  float *row = malloc(sizeof(float) * info.output_width);
  int32_t tokens[2] = {1, 2};
  if (num_source && (status = tmr_set_source(session, source, num_source, NULL, 0)) != TMR_OK)
    return fail("set_source", status);
  if ((status = tmr_prefill(session, tokens, 2, TMR_ROWS_LAST, row, info.output_width)) != TMR_OK)
    return fail("prefill", status);

  if (truncate(path, 0) != 0) {
    perror("truncate");
    return 1;
  }
  status = tmr_decode_step(session, 3, row, info.output_width);
  if (status != TMR_ERROR_IO || !strstr(tmr_last_error(), path) ||
      !strstr(tmr_last_error(), "truncated while the model was reading it")) {
    fprintf(stderr, "FAIL: a step after the weights were truncated gave \"%s\" (%s), not "
                    "TMR_ERROR_IO naming %s\n",
            tmr_status_message(status), tmr_last_error(), path);
    return 1;
  }
  printf("ok: %s: truncated weights: %s\n", info.name, tmr_last_error());
  tmr_session_destroy(session);
  tmr_model_close(model);
  free(row);
  return 0;
}
