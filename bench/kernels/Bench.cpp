//===- Bench.cpp - tmc GEMM kernels against oneDNN's sgemm ----------------===//
//
// Built by run.sh against the objects of bench_kernels_gen (kernels.inc) and
// libdnnl. For each shape (T tokens, K in, N out), at the thread count that
// --threads gives (1 or 2; one process per count):
//  1. checks every tmc variant and oneDNN against a naive double GEMM
//     (max |y - ref| / max |ref| <= 1e-5), and times nothing on a failure;
//  2. times oneDNN and every tmc variant interleaved: each round visits
//     every shape and thread count and runs, per implementation in a
//     shuffled order, warm-up calls then a block of individually timed
//     calls; the figure is the
//     best round's median (the machine is shared: a round that overlapped
//     someone's build is slower for whoever it hit, and the interleaving
//     gives every implementation the same chances);
//  3. prints GFLOP/s and tmc / oneDNN for the default schedule and the best
//     variant, then every implementation's GFLOP/s.
// tmc's weights are packed once before timing (as the executor does at load);
// oneDNN's sgemm runs on the [N, K] weight as stored and on a [K, N] copy
// made before timing, and its better layout counts (its packing is per call).
//
//===----------------------------------------------------------------------===//

#include "HalideBuffer.h"
#include "HalideRuntime.h"

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

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

struct GemmVariant {
  long K, N;
  const char *name;
  const char *schedule;
  int packed[3]; ///< P, K, panels
  int (*pack)(halide_buffer_t *, halide_buffer_t *);
  int (*gemm)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);
};

struct BenchShape {
  const char *model;
  int T, K, N;
};

// kVariants (the kernels), kShapes (the table's rows: bench_kernels_gen
// --shapes), kTarget and kFmaPeak (GFLOP/s of the target's FMAs at 1 and 2
// threads, measured by the generator as `tmc tune` measures it).
#include "kernels.inc"

namespace {

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// max |y - ref| / max |ref| of a row-major [T, N] result.
double relativeError(const float *y, const std::vector<double> &ref) {
  double maxDiff = 0, maxRef = 1e-30;
  for (size_t i = 0; i < ref.size(); ++i) {
    maxDiff = std::max(maxDiff, std::abs(y[i] - ref[i]));
    maxRef = std::max(maxRef, std::abs(ref[i]));
  }
  return maxDiff / maxRef;
}

/// One implementation under test: a call, and its per-round medians for
/// each thread count.
struct Impl {
  std::string name;
  std::function<void()> call;
  std::vector<double> roundMedians[2];
  double best(int threads) const {
    const std::vector<double> &m = roundMedians[threads - 1];
    return *std::min_element(m.begin(), m.end());
  }
};

/// Where tmc's implementations start in Case::impls (after oneDNN's two).
constexpr size_t kFirstTmc = 2;

/// One shape's data, reference result, and implementations.
struct Case {
  BenchShape shape;
  std::vector<float> x, w, wt, y;
  std::vector<double> ref;
  Buffer<float> xb, wb, yb;                // Halide views: x (k, t), weight (k, n), y (n, t)
  std::deque<Buffer<float>> packedWeights; // stable addresses for raw_buffer()
  std::vector<Impl> impls;                 // oneDNN (2 layouts), tmc's default, variants
  int reps = 5;                            // timed calls per block
};

/// Set once per process: switching Halide's pool between counts
/// (halide_shutdown_thread_pool, then halide_set_num_threads) often left the
/// second thread idle for the next calls (bench/kernels/README.md), so run.sh
/// runs one process per thread count.
void setThreads(int threads) {
  omp_set_num_threads(threads);
  halide_set_num_threads(threads);
}

/// Fills `c` with random inputs, the double reference, and the calls.
bool setUp(Case &c, std::mt19937 &rng) {
  const int T = c.shape.T, K = c.shape.K, N = c.shape.N;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  c.x.resize(size_t(T) * K);
  c.w.resize(size_t(N) * K);
  c.y.resize(size_t(T) * N);
  for (float &v : c.x)
    v = dist(rng);
  for (float &v : c.w)
    v = dist(rng);
  c.ref.resize(size_t(T) * N);
  for (int t = 0; t < T; ++t)
    for (int n = 0; n < N; ++n) {
      double sum = 0;
      for (int k = 0; k < K; ++k)
        sum += double(c.x[size_t(t) * K + k]) * c.w[size_t(n) * K + k];
      c.ref[size_t(t) * N + n] = sum;
    }
  c.xb = Buffer<float>(c.x.data(), K, T);
  c.wb = Buffer<float>(c.w.data(), K, N);
  c.yb = Buffer<float>(c.y.data(), N, T);
  float *x = c.x.data(), *w = c.w.data(), *y = c.y.data();
  // oneDNN in both weight layouts, the better one counting: [N, K] as the
  // model stores it, and [K, N] transposed up front (as tmc packs up front).
  c.wt.resize(c.w.size());
  for (int n = 0; n < N; ++n)
    for (int k = 0; k < K; ++k)
      c.wt[size_t(k) * N + n] = c.w[size_t(n) * K + k];
  float *wt = c.wt.data();
  c.impls.push_back({"oneDNN-NK", [=] {
                       dnnl_sgemm('N', 'T', T, N, K, 1.0f, x, K, w, K, 0.0f, y, N);
                     }, {}});
  c.impls.push_back({"oneDNN-KN", [=] {
                       dnnl_sgemm('N', 'N', T, N, K, 1.0f, x, K, wt, N, 0.0f, y, N);
                     }, {}});
  for (const GemmVariant &v : kVariants) {
    if (v.K != K || v.N != N)
      continue;
    // Packed once, as the executor does after loading the weights.
    Buffer<float> &packed = c.packedWeights.emplace_back(v.packed[0], v.packed[1], v.packed[2]);
    if (v.pack(c.wb.raw_buffer(), packed.raw_buffer()) != 0) {
      std::fprintf(stderr, "pack kernel %s failed\n", v.name);
      return false;
    }
    auto gemm = v.gemm;
    halide_buffer_t *px = c.xb.raw_buffer(), *pw = packed.raw_buffer(), *py = c.yb.raw_buffer();
    c.impls.push_back({v.name, [gemm, px, pw, py] {
                         if (gemm(px, pw, py) != 0)
                           std::abort();
                       }, {}});
  }
  return true;
}

/// Every implementation's result against the reference.
bool check(Case &c) {
  bool ok = true;
  for (Impl &impl : c.impls) {
    std::fill(c.y.begin(), c.y.end(), NAN);
    impl.call();
    double err = relativeError(c.y.data(), c.ref);
    if (!(err <= 1e-5)) {
      std::printf("WRONG RESULT: %s on T=%d K=%d N=%d: relative error %.3g\n", impl.name.c_str(),
                  c.shape.T, c.shape.K, c.shape.N, err);
      ok = false;
    }
  }
  return ok;
}

/// One round of one case at one thread count: a timed block per
/// implementation, in an order shuffled per round so that none always follows
/// the same neighbour (whose threads may still spin, whose data fills the
/// caches).
void timeRound(Case &c, int threads, std::mt19937 &rng) {
  std::vector<size_t> order(c.impls.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (size_t index : order) {
    Impl &impl = c.impls[index];
    // OpenMP's workers spin after oneDNN returns (and Halide's briefly): let
    // them go to sleep before the next block.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (int i = 0; i < std::max(3, c.reps / 4); ++i)
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
  int rounds = 15, threads = 1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--threads"))
      threads = std::atoi(argv[i + 1]);
  }
  if (threads != 1 && threads != 2) {
    std::fprintf(stderr, "bench_kernels: --threads takes 1 or 2\n");
    return 2;
  }
  setThreads(threads);

  std::mt19937 rng(42);
  std::deque<Case> cases;
  bool allCorrect = true;
  for (const BenchShape &shape : kShapes) {
    Case &c = cases.emplace_back();
    c.shape = shape;
    if (!setUp(c, rng))
      return 1;
    allCorrect = check(c) && allCorrect;
    // Calls per block: about 10 ms of oneDNN's work.
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 3; ++i)
      c.impls[0].call();
    double once = seconds(std::chrono::steady_clock::now() - start) / 3;
    c.reps = std::clamp(static_cast<int>(0.01 / std::max(once, 1e-7)), 5, 200);
  }
  if (!allCorrect) {
    std::printf("FAILED: some results were wrong (see above); nothing timed\n");
    return 1;
  }

  // Rounds outermost, so that a burst of load on the shared machine hits a
  // round of a few rows rather than every round of one row.
  std::mt19937 orderRng(7);
  for (int round = 0; round < rounds; ++round)
    for (Case &c : cases)
      timeRound(c, threads, orderRng);

  std::printf("tmc GEMM kernels vs oneDNN %d.%d sgemm; tmc target: %s\n",
              dnnl_version()->major, dnnl_version()->minor, kTarget);
  std::printf("best of %d interleaved rounds' medians; GFLOP/s = 2*T*K*N / time\n\n", rounds);
  std::printf("%d thread(s); FMA peak (measured): %.1f GFLOP/s\n\n", threads,
              kFmaPeak[threads - 1]);
  std::printf("%-28s %4s %5s %5s %3s | %8s %5s | %8s %6s %5s | %-10s %8s %6s %5s\n", "shape", "T",
              "K", "N", "thr", "oneDNN", "peak", "default", "ratio", "peak", "best", "GFLOP/s",
              "ratio", "peak");
  std::string detail;
  for (const Case &c : cases) {
      const double flop = 2.0 * c.shape.T * c.shape.K * c.shape.N;
      double dnnl = flop / std::min(c.impls[0].best(threads), c.impls[1].best(threads)) / 1e9;
      double def = flop / c.impls[kFirstTmc].best(threads) / 1e9;
      size_t best = kFirstTmc;
      char line[160];
      std::snprintf(line, sizeof line, "  T=%d K=%d N=%d %dT:", c.shape.T, c.shape.K, c.shape.N,
                    threads);
      detail += line;
      for (size_t i = 0; i < c.impls.size(); ++i) {
        std::snprintf(line, sizeof line, " %s=%.1f", c.impls[i].name.c_str(),
                      flop / c.impls[i].best(threads) / 1e9);
        detail += line;
      }
      detail += "\n";
      for (size_t i = kFirstTmc + 1; i < c.impls.size(); ++i)
        if (c.impls[i].best(threads) < c.impls[best].best(threads))
          best = i;
      double bestRate = flop / c.impls[best].best(threads) / 1e9;
      const double peak = kFmaPeak[threads - 1];
      std::printf("%-28s %4d %5d %5d %3d | %8.1f %4.0f%% | %8.1f %5.0f%% %4.0f%% | %-10s %8.1f "
                  "%5.0f%% %4.0f%%\n",
                  c.shape.model, c.shape.T, c.shape.K, c.shape.N, threads, dnnl, 100 * dnnl / peak,
                  def, 100 * def / dnnl, 100 * def / peak, c.impls[best].name.c_str(), bestRate,
                  100 * bestRate / dnnl, 100 * bestRate / peak);
    }
  std::printf("\nGFLOP/s of every implementation:\n%s", detail.c_str());
  std::printf("\nschedules:\n");
  for (const GemmVariant &v : kVariants)
    std::printf("  k%ld_n%ld %-10s %s\n", v.K, v.N, v.name, v.schedule);
  return 0;
}
