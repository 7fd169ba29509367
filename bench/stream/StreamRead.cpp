//===- StreamRead.cpp - Memory read bandwidth, as a decoding step uses it -===//
//
// The yardstick of the decoding benchmarks: how fast this machine reads a
// buffer far larger than its caches, with as many threads as the engine
// under test uses. Each thread reads its own contiguous part (first touched
// by that thread; allocated as the runtime allocates weights, on huge
// pages), summing 64-bit words so that the loop vectorizes without
// reassociating floats; the best of --reps passes is reported, as STREAM
// does, in decimal GB/s.
//
//   bench_stream [--bytes N] [--threads T] [--reps R]   -> {"read_gb_per_s": ...}
//
//===----------------------------------------------------------------------===//

#include "runtime/aligned.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  int64_t bytes = int64_t(1) << 30;
  int threads = 2;
  int reps = 10;
};

[[noreturn]] void usage(const char *why) {
  std::fprintf(stderr,
               "bench_stream: %s\nusage: bench_stream [--bytes N] [--threads T] [--reps R]\n", why);
  std::exit(2);
}

int64_t number(const char *flag, const char *text, int64_t low, int64_t high) {
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (!*text || *end || value < low || value > high)
    usage((std::string(flag) + " " + text + ": expected an integer in [" + std::to_string(low) +
           ", " + std::to_string(high) + "]")
              .c_str());
  return value;
}

Options parse(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 >= argc)
      usage("each flag takes a value");
    if (!std::strcmp(argv[i], "--bytes"))
      options.bytes = number("--bytes", argv[++i], 1 << 20, int64_t(1) << 36);
    else if (!std::strcmp(argv[i], "--threads"))
      options.threads = static_cast<int>(number("--threads", argv[++i], 1, 256));
    else if (!std::strcmp(argv[i], "--reps"))
      options.reps = static_cast<int>(number("--reps", argv[++i], 1, 1000));
    else
      usage((std::string("unknown flag ") + argv[i]).c_str());
  }
  return options;
}

/// Sums the words of [begin, end): the read the compiler cannot drop.
uint64_t sumWords(const uint64_t *begin, const uint64_t *end) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  const uint64_t *p = begin;
  for (; p + 4 <= end; p += 4) {
    a += p[0];
    b += p[1];
    c += p[2];
    d += p[3];
  }
  for (; p < end; ++p)
    a += *p;
  return a + b + c + d;
}

} // namespace

int main(int argc, char **argv) {
  Options options = parse(argc, argv);
  const size_t words = static_cast<size_t>(options.bytes) / sizeof(uint64_t);
  // runtime/aligned.h's allocation, as the runtime's weights get it (a
  // mapping with huge pages): the yardstick is what this machine reads at
  // its best, not through a 4 KiB TLB. Not touched here: each thread first
  // touches its own part, below.
  const size_t bytes = words * sizeof(uint64_t);
  struct Free {
    size_t bytes;
    void operator()(uint64_t *p) const { tmr::freeAligned(p, bytes); }
  };
  std::unique_ptr<uint64_t, Free> buffer(static_cast<uint64_t *>(tmr::allocateAligned(bytes)),
                                         Free{bytes});
  if (!buffer)
    usage("cannot allocate the buffer");
  const size_t part = words / static_cast<size_t>(options.threads);
  std::vector<uint64_t> sums(static_cast<size_t>(options.threads));
  auto onEachThread = [&](auto &&body) {
    std::vector<std::thread> pool;
    for (int t = 0; t < options.threads; ++t)
      pool.emplace_back([&, t] {
        size_t begin = part * static_cast<size_t>(t);
        size_t end = t + 1 == options.threads ? words : begin + part;
        body(t, buffer.get() + begin, buffer.get() + end);
      });
    for (std::thread &thread : pool)
      thread.join();
  };
  // First touch by the thread that reads each part.
  onEachThread([](int, uint64_t *begin, uint64_t *end) {
    for (uint64_t *p = begin; p < end; ++p)
      *p = static_cast<uint64_t>(p - begin);
  });
  double best = 0;
  uint64_t checksum = 0;
  for (int rep = 0; rep < options.reps; ++rep) {
    auto start = std::chrono::steady_clock::now();
    onEachThread([&](int t, uint64_t *begin, uint64_t *end) { sums[t] = sumWords(begin, end); });
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(words * sizeof(uint64_t)) / seconds / 1e9);
    for (uint64_t s : sums)
      checksum += s;
  }
  std::printf("{\"read_gb_per_s\": %.3f, \"bytes\": %lld, \"threads\": %d, \"reps\": %d, "
              "\"checksum\": %llu}\n",
              best, static_cast<long long>(words * sizeof(uint64_t)), options.threads, options.reps,
              static_cast<unsigned long long>(checksum));
  return 0;
}
