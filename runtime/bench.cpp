//===- bench.cpp - --bench: timing a compiled model's runs ----------------===//

#include "runtime/bench.h"

#include "runtime/sampling.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <sys/resource.h>

namespace tmr {

namespace {

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

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

} // namespace

bool benchmark(const tmr_model_desc &desc, const std::vector<const void *> &weights,
               const void *prepared, int32_t threads, const BenchInputs &inputs,
               BenchResult *result, std::string *error) {
  std::vector<double> prefill, decode;
  AlignedVector<float> output;
  Sampler greedy(SamplingOptions{});
  for (int run = 0; run <= inputs.runs; ++run) {
    Session session(desc, weights, prepared, threads);
    session.setSource(inputs.source);
    session.setLength(inputs.length);
    auto start = std::chrono::steady_clock::now();
    if (!session.run(inputs.tokens, inputs.segments, &output, error))
      return false;
    if (run > 0)
      prefill.push_back(millisecondsSince(start));
    for (int64_t step = 0; step < inputs.maxNew; ++step) {
      std::optional<int32_t> next =
          greedy.next(output.data() + output.size() - desc.output_width, desc.output_width, error);
      if (!next)
        return false;
      start = std::chrono::steady_clock::now();
      if (!session.run({*next}, {}, &output, error))
        return false;
      if (run > 0)
        decode.push_back(millisecondsSince(start));
    }
  }
  result->prefillMs = median(prefill);
  result->decodeMs = median(decode);
  result->decodeSteps = static_cast<int64_t>(decode.size());
  result->peakRssBytes = peakRssBytes();
  return true;
}

} // namespace tmr
