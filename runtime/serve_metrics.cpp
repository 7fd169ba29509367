//===- serve_metrics.cpp - /metrics in Prometheus' text format ------------===//

#include "runtime/serve_routes.h"

#include <cstdio>

namespace tmr::serve {

namespace {

const char *const kRouteNames[] = {"completions", "embeddings", "classify",
                                   "health",      "metrics",    "other"};

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

} // namespace

void Metrics::record(Route route, int status, double seconds) {
  int statusClass = status / 100 - 1;
  if (statusClass < 0 || statusClass > 4)
    statusClass = 4;
  ++requests[route][statusClass];
  size_t bucket = 0;
  while (bucket < kBuckets.size() && seconds > kBuckets[bucket])
    ++bucket;
  ++buckets[route][bucket];
  microseconds[route] += static_cast<int64_t>(seconds * 1e6);
}

std::string Metrics::text(const EngineStats &engine) const {
  std::string out;
  out += "# HELP tmc_requests_total HTTP requests answered, by route and status class "
         "(4xx: 499 counts clients that left).\n# TYPE tmc_requests_total counter\n";
  for (int r = 0; r < kRoutes; ++r)
    for (int c = 0; c < 5; ++c)
      if (int64_t n = requests[r][c])
        out += "tmc_requests_total{route=\"" + std::string(kRouteNames[r]) + "\",status=\"" +
               std::to_string(c + 1) + "xx\"} " + std::to_string(n) + "\n";
  out += "# HELP tmc_request_duration_seconds Time from a request's arrival to its last byte.\n"
         "# TYPE tmc_request_duration_seconds histogram\n";
  for (int r = 0; r < kRoutes; ++r) {
    int64_t cumulative = 0;
    std::string route = "route=\"" + std::string(kRouteNames[r]) + "\"";
    for (size_t b = 0; b <= kBuckets.size(); ++b) {
      cumulative += buckets[r][b];
      out += "tmc_request_duration_seconds_bucket{" + route + ",le=\"" +
             (b < kBuckets.size() ? number(kBuckets[b]) : std::string("+Inf")) + "\"} " +
             std::to_string(cumulative) + "\n";
    }
    out += "tmc_request_duration_seconds_sum{" + route + "} " +
           number(static_cast<double>(microseconds[r].load()) / 1e6) + "\n";
    out += "tmc_request_duration_seconds_count{" + route + "} " + std::to_string(cumulative) + "\n";
  }
  auto counter = [&](const char *name, const char *help, int64_t value) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name +
           " " + std::to_string(value) + "\n";
  };
  auto gauge = [&](const char *name, const char *help, int64_t value) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n" + name +
           " " + std::to_string(value) + "\n";
  };
  counter("tmc_prompt_tokens_total", "Prompt and input tokens run.", engine.promptTokens);
  counter("tmc_generated_tokens_total", "Tokens generated.", engine.generatedTokens);
  out += "# HELP tmc_jobs_total Sequences finished, by result.\n# TYPE tmc_jobs_total counter\n"
         "tmc_jobs_total{result=\"done\"} " +
         std::to_string(engine.jobsDone) + "\ntmc_jobs_total{result=\"failed\"} " +
         std::to_string(engine.jobsFailed) + "\ntmc_jobs_total{result=\"cancelled\"} " +
         std::to_string(engine.jobsCancelled) + "\n";
  // Batch occupancy: how many sequences each batched step carried.
  out += "# HELP tmc_batch_occupancy Sequences per batched model call.\n"
         "# TYPE tmc_batch_occupancy histogram\n";
  int64_t cumulative = 0, sum = 0;
  for (size_t n = 1; n < engine.stepsBySize.size(); ++n) {
    cumulative += engine.stepsBySize[n];
    sum += static_cast<int64_t>(n) * engine.stepsBySize[n];
    out += "tmc_batch_occupancy_bucket{le=\"" + std::to_string(n) + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  out += "tmc_batch_occupancy_bucket{le=\"+Inf\"} " + std::to_string(cumulative) +
         "\ntmc_batch_occupancy_sum " + std::to_string(sum) + "\ntmc_batch_occupancy_count " +
         std::to_string(cumulative) + "\n";
  gauge("tmc_slots", "Sequences the server decodes at once.", engine.slots);
  gauge("tmc_slots_active", "Slots holding a sequence now.", engine.active);
  gauge("tmc_queue_length", "Requests waiting for a slot.", engine.queued);
  return out;
}

} // namespace tmr::serve
