//===- BenchAttention.cpp - fused attention against an unfused version ----===//
//
// Built by run.sh against the objects of bench_kernels_gen (attention.inc).
// GPT-2 small's causal self-attention (12 heads x 64) at T = 128 and 512
// tokens, 1 and 2 threads:
//  1. checks tmc's fused kernel (every schedule variant) and the unfused
//     version (QK^T GEMM -> [12, T, T] scores, causal mask + softmax -> [12,
//     T, T] weights, weights x V GEMM) against a naive double attention
//     (max |y - ref| / max |ref| <= 1e-5), and times nothing on a failure;
//  2. times them interleaved as Bench.cpp does (rounds outermost, shuffled
//     order per round, best round's median);
//  3. prints milliseconds and unfused time / fused time (> 1: fused faster).
//
//===----------------------------------------------------------------------===//

#include "HalideBuffer.h"
#include "HalideRuntime.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

using Halide::Runtime::Buffer;

struct AttentionVariant {
  const char *name;
  const char *schedule;
  int (*fn)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);
};

#include "attention.inc"

namespace {

constexpr int kHeads = 12, kHeadDim = 64;
constexpr float kScale = 0.125f;

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Impl {
  std::string name;
  std::function<void()> call;
  std::vector<double> roundMedians[2];
  double best(int threads) const {
    const std::vector<double> &m = roundMedians[threads - 1];
    return *std::min_element(m.begin(), m.end());
  }
};

struct Case {
  int T = 0;
  Buffer<float> q, k, v, out, scores, probs;
  std::vector<double> ref;
  std::vector<Impl> impls; // unfused first, then tmc's variants
  int reps = 5;
};

void setThreads(int threads) {
  halide_shutdown_thread_pool();
  halide_set_num_threads(threads);
}

/// Causal softmax(q k^T * scale) v in double; out[(i * H + h) * D + d].
std::vector<double> reference(const Case &c) {
  const int T = c.T;
  std::vector<double> ref(size_t(T) * kHeads * kHeadDim, 0.0), w(T);
  for (int h = 0; h < kHeads; ++h)
    for (int i = 0; i < T; ++i) {
      double mx = -1e300;
      for (int j = 0; j <= i; ++j) {
        double s = 0;
        for (int d = 0; d < kHeadDim; ++d)
          s += double(c.q(d, h, i)) * c.k(d, h, j);
        w[j] = s * kScale;
        mx = std::max(mx, w[j]);
      }
      double sum = 0;
      for (int j = 0; j <= i; ++j)
        sum += (w[j] = std::exp(w[j] - mx));
      for (int d = 0; d < kHeadDim; ++d) {
        double acc = 0;
        for (int j = 0; j <= i; ++j)
          acc += w[j] * c.v(d, h, j);
        ref[(size_t(i) * kHeads + h) * kHeadDim + d] = acc / sum;
      }
    }
  return ref;
}

void setUp(Case &c, std::mt19937 &rng) {
  const int T = c.T;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (Buffer<float> *b : {&c.q, &c.k, &c.v}) {
    *b = Buffer<float>(kHeadDim, kHeads, T);
    // Scaled up so that softmax rows are peaked, as in a trained model.
    b->for_each_value([&](float &x) { x = 2.0f * dist(rng); });
  }
  c.out = Buffer<float>(kHeadDim, kHeads, T);
  c.scores = Buffer<float>(T, T, kHeads);
  c.probs = Buffer<float>(T, T, kHeads);
  c.ref = reference(c);
  halide_buffer_t *q = c.q.raw_buffer(), *k = c.k.raw_buffer(), *v = c.v.raw_buffer(),
                  *out = c.out.raw_buffer(), *s = c.scores.raw_buffer(),
                  *p = c.probs.raw_buffer();
  c.impls.push_back({"unfused", [=] {
                       if (tmb_unfused_scores(q, k, s) || tmb_unfused_softmax(s, p) ||
                           tmb_unfused_pv(p, v, out))
                         std::abort();
                     }, {}});
  for (const AttentionVariant &variant : kAttnVariants) {
    auto fn = variant.fn;
    c.impls.push_back({variant.name, [=] {
                         if (fn(q, k, v, out))
                           std::abort();
                       }, {}});
  }
}

bool check(Case &c) {
  bool ok = true;
  for (Impl &impl : c.impls) {
    c.out.fill(NAN);
    impl.call();
    double maxDiff = 0, maxRef = 1e-30;
    for (int i = 0; i < c.T; ++i)
      for (int h = 0; h < kHeads; ++h)
        for (int d = 0; d < kHeadDim; ++d) {
          double r = c.ref[(size_t(i) * kHeads + h) * kHeadDim + d];
          double diff = std::abs(c.out(d, h, i) - r);
          maxDiff = std::isnan(diff) ? INFINITY : std::max(maxDiff, diff);
          maxRef = std::max(maxRef, std::abs(r));
        }
    if (!(maxDiff / maxRef <= 1e-5)) {
      std::printf("WRONG RESULT: %s at T=%d: relative error %.3g\n", impl.name.c_str(), c.T,
                  maxDiff / maxRef);
      ok = false;
    }
  }
  return ok;
}

void timeRound(Case &c, int threads, std::mt19937 &rng) {
  std::vector<size_t> order(c.impls.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (size_t index : order) {
    Impl &impl = c.impls[index];
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (int i = 0; i < std::max(2, c.reps / 4); ++i)
      impl.call();
    std::vector<double> samples;
    for (int i = 0; i < c.reps; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      impl.call();
      samples.push_back(seconds(std::chrono::steady_clock::now() - t0));
    }
    impl.roundMedians[threads - 1].push_back(median(samples));
  }
}

} // namespace

int main(int argc, char **argv) {
  int rounds = 15;
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::max(1, std::atoi(argv[i + 1]));

  std::mt19937 rng(42);
  std::deque<Case> cases;
  bool allCorrect = true;
  for (int T : {128, 512}) {
    Case &c = cases.emplace_back();
    c.T = T;
    setUp(c, rng);
    for (int threads : {1, 2}) {
      setThreads(threads);
      allCorrect = check(c) && allCorrect;
    }
    setThreads(1);
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 3; ++i)
      c.impls[0].call();
    double once = seconds(std::chrono::steady_clock::now() - start) / 3;
    c.reps = std::clamp(static_cast<int>(0.02 / std::max(once, 1e-7)), 3, 100);
  }
  if (!allCorrect) {
    std::printf("FAILED: some results were wrong (see above); nothing timed\n");
    return 1;
  }
  std::mt19937 orderRng(7);
  for (int round = 0; round < rounds; ++round)
    for (Case &c : cases)
      for (int threads : {1, 2}) {
        setThreads(threads);
        timeRound(c, threads, orderRng);
      }

  std::printf("tmc fused attention vs unfused (QK^T GEMM, causal softmax, PV GEMM; [12, T, T] "
              "scores in memory)\nGPT-2 small heads: 12 x 64, causal; tmc target: %s\n",
              kAttnTarget);
  std::printf("best of %d interleaved rounds' medians; speedup = unfused time / fused time\n\n",
              rounds);
  std::printf("%5s %3s | %9s | %9s %7s | %-14s %9s %7s\n", "T", "thr", "unfused ms",
              "fused ms", "speedup", "best variant", "ms", "speedup");
  std::string detail;
  for (const Case &c : cases)
    for (int threads : {1, 2}) {
      double unfused = c.impls[0].best(threads), fused = c.impls[1].best(threads);
      size_t best = 1;
      char line[200];
      std::snprintf(line, sizeof line, "  T=%d %dT:", c.T, threads);
      detail += line;
      for (size_t i = 0; i < c.impls.size(); ++i) {
        std::snprintf(line, sizeof line, " %s=%.3f", c.impls[i].name.c_str(),
                      1e3 * c.impls[i].best(threads));
        detail += line;
        if (i >= 1 && c.impls[i].best(threads) < c.impls[best].best(threads))
          best = i;
      }
      detail += "\n";
      double b = c.impls[best].best(threads);
      std::printf("%5d %3d | %9.3f | %9.3f %6.2fx | %-14s %9.3f %6.2fx\n", c.T, threads,
                  1e3 * unfused, 1e3 * fused, unfused / fused, c.impls[best].name.c_str(),
                  1e3 * b, unfused / b);
    }
  std::printf("\nms of every implementation:\n%s", detail.c_str());
  std::printf("\nschedules:\n");
  for (const AttentionVariant &v : kAttnVariants)
    std::printf("  %-14s %s\n", v.name, v.schedule);
  return 0;
}
