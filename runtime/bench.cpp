//===- bench.cpp - --bench: timing a compiled model's runs ----------------===//

#include "runtime/bench.h"

#include "runtime/executor_support.h"
#include "runtime/sampling.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <sys/resource.h>

namespace tmr {

namespace {

/// The `q` quantile (0 to 1) of `values`, interpolated linearly between the
/// two nearest ranks (q = 0.5: the median); 0 for none.
double quantile(std::vector<double> values, double q) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  const double rank = q * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(rank);
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (rank - static_cast<double>(below)) * (values[above] - values[below]);
}

double median(const std::vector<double> &values) { return quantile(values, 0.5); }

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// This program's peak resident memory. Linux keeps getrusage's ru_maxrss
/// across execve, so a model started by a large process would report its
/// parent's peak; VmHWM belongs to this program's own address space.
int64_t peakRssBytes() {
  if (std::FILE *status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    long long kib = -1;
    while (std::fgets(line, sizeof line, status))
      if (std::sscanf(line, "VmHWM: %lld kB", &kib) == 1)
        break;
    std::fclose(status);
    if (kib >= 0)
      return static_cast<int64_t>(kib) * 1024;
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

/// `steps` greedy decoding steps after the run whose logits `output` holds,
/// each timed into `times` when `measured`.
bool decodeSteps(Session &session, int64_t steps, bool measured, Sampler &greedy,
                 AlignedVector<float> *output, std::vector<double> *times, std::string *error) {
  const int64_t width = session.model().output_width;
  for (int64_t step = 0; step < steps; ++step) {
    std::optional<int32_t> next =
        greedy.next(output->data() + output->size() - width, width, error);
    if (!next)
      return false;
    auto start = std::chrono::steady_clock::now();
    if (!session.run({*next}, {}, output, error))
      return false;
    if (measured)
      times->push_back(millisecondsSince(start));
  }
  return true;
}

} // namespace

bool benchmark(const tmr_model_desc &desc, const std::vector<const void *> &weights,
               const void *prepared, int32_t threads, const BenchInputs &inputs,
               BenchResult *result, std::string *error) {
  std::vector<double> prefill, lastRowPrefill, decode;
  AlignedVector<float> output;
  Sampler greedy(SamplingOptions{});
  // One session for every run, as a serving process keeps one (and as the
  // peers are timed): its arena's pages are resident after the warm-up run,
  // where a fresh session per run would time their first-touch faults (its
  // large blocks are mapped afresh: aligned.h).
  Session session(desc, weights, prepared, threads);
  for (int run = 0; run <= inputs.runs; ++run) {
    // TMR_PROFILE covers the timed runs only (executor_support.h).
    if (run == 1)
      executor::resetProfile();
    // The prompt as the benchmarks' peers compute it, every row's output;
    // then, where steps follow, as generation runs it: the last row's logits.
    for (bool lastRow : {false, true}) {
      if (lastRow && inputs.maxNew == 0)
        break;
      session.reset();
      session.setSource(inputs.source);
      session.setLength(inputs.length);
      auto start = std::chrono::steady_clock::now();
      if (!session.run(inputs.tokens, inputs.segments, &output, error, lastRow))
        return false;
      if (run > 0)
        (lastRow ? lastRowPrefill : prefill).push_back(millisecondsSince(start));
      if (lastRow && !decodeSteps(session, inputs.maxNew, run > 0, greedy, &output, &decode, error))
        return false;
    }
  }
  result->prefillMs = median(prefill);
  result->lastRowPrefillMs = median(lastRowPrefill);
  result->decodeMs = median(decode);
  result->decodeP10Ms = quantile(decode, 0.1);
  result->decodeP90Ms = quantile(decode, 0.9);
  result->decodeSteps = static_cast<int64_t>(decode.size());
  result->peakRssBytes = peakRssBytes();
  return true;
}

} // namespace tmr
