/* bench/e2e/bench_harness.h - what the C benchmark harnesses (batch_decode.c, batch_encode.c)
 * share: checked tmr calls, allocation, arguments, a clock, the deterministic token stream the
 * peers' runners compute too, and the peak resident memory. Each harness defines HARNESS_NAME
 * (its messages' prefix) before including this header, after model.h. */
#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Prints the failed call's status and message and exits 1. */
static void fail(const char *call, tmr_status status) {
  fprintf(stderr, HARNESS_NAME ": %s: %s: %s\n", call, tmr_status_message(status),
          tmr_last_error());
  exit(1);
}

#define CHECK(call)                                                                                \
  do {                                                                                             \
    tmr_status status_ = (call);                                                                   \
    if (status_ != TMR_OK)                                                                         \
      fail(#call, status_);                                                                        \
  } while (0)

/* Warns when `count` inputs (`what`: "sequences", "inputs") are more than one call of the
 * model carries: the runtime then splits each run. */
static void warn_split(int32_t count, int32_t max_batch, const char *what) {
  if (count > max_batch)
    fprintf(stderr,
            HARNESS_NAME ": warning: %d %s, but one call of this model carries %d (tmc compile "
                         "--max-batch): the runtime splits each run\n",
            count, what, max_batch);
}

static void *allocate(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, HARNESS_NAME ": out of memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

/* A whole decimal argument in [low, high], or exit 2. */
static long argument(const char *text, const char *name, long low, long high) {
  char *end;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno || end == text || *end || value < low || value > high) {
    fprintf(stderr, HARNESS_NAME ": %s must be an integer in [%ld, %ld], not '%s'\n", name, low,
            high, text);
    exit(2);
  }
  return value;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Sequence s's tokens: x <- (1103515245 x + 12345) mod 2^31 from x = 7919 s + 1, each token
 * (x >> 8) mod vocab (bench/peers/llama_batch_runner.mjs's promptOf and batch_encode.py's
 * ids_of compute the same). */
static void prompt_of(int32_t s, int32_t *tokens, int64_t count, int64_t vocab) {
  uint32_t x = (uint32_t)s * 7919u + 1u;
  for (int64_t i = 0; i < count; ++i) {
    x = (x * 1103515245u + 12345u) & 0x7fffffffu;
    tokens[i] = (int32_t)((x >> 8) % (uint32_t)vocab);
  }
}

/* VmHWM: this program's peak resident memory. */
static long long peak_rss_bytes(void) {
  FILE *status = fopen("/proc/self/status", "r");
  char line[256];
  long long kib = -1;
  if (!status)
    return -1;
  while (fgets(line, sizeof line, status))
    if (sscanf(line, "VmHWM: %lld kB", &kib) == 1)
      break;
  fclose(status);
  return kib < 0 ? -1 : kib * 1024;
}

#endif
