//===- Bench.cpp - tmc GEMM kernels against oneDNN's sgemm ----------------===//
//
// Built by run.sh against the objects of bench_kernels_gen (kernels.inc) and
// libdnnl. For each shape (T tokens, K in, N out) and 1 and 2 threads:
//  1. checks every tmc variant and oneDNN against a naive double GEMM
//     (max |y - ref| / max |ref| <= 1e-5), and stops on a failure;
//  2. times oneDNN and every tmc variant interleaved: each round runs each
//     implementation's warm-up calls then a block of individually timed
//     calls; the figure is the median over all rounds' calls;
//  3. prints GFLOP/s and tmc / oneDNN for the default schedule and the best
//     variant.
// tmc's weights are packed once before timing (as the executor does at load);
// oneDNN's sgemm takes the plain [N, K] weight (its packing is per call).
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

#include "kernels.inc"

namespace {

struct BenchShape {
  const char *model;
  int T, K, N;
};

const BenchShape kShapes[] = {
    {"GPT-2/BERT prefill attn out", 128, 768, 768},
    {"GPT-2 prefill QKV", 128, 768, 2304},
    {"GPT-2/BERT prefill FFN up", 128, 768, 3072},
    {"GPT-2/BERT prefill FFN down", 128, 3072, 768},
    {"GPT-2 decode QKV", 1, 768, 2304},
    {"GPT-2 decode attn out", 1, 768, 768},
    {"GPT-2 decode FFN up", 1, 768, 3072},
    {"GPT-2 decode FFN down", 1, 3072, 768},
};

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

/// One implementation under test: a call, and its timing samples.
struct Impl {
  std::string name;
  std::function<void()> call;
  std::vector<double> samples;
};

void setThreads(int threads) {
  omp_set_num_threads(threads);
  // Halide keeps the pool it started with unless it is shut down first.
  halide_shutdown_thread_pool();
  halide_set_num_threads(threads);
}

} // namespace

int main(int argc, char **argv) {
  int rounds = 9;
  for (int i = 1; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::max(1, std::atoi(argv[i + 1]));

  std::printf("tmc GEMM kernels vs oneDNN %d.%d sgemm; tmc target: %s\n",
              dnnl_version()->major, dnnl_version()->minor, kTarget);
  std::printf("medians of %d interleaved rounds; GFLOP/s = 2*T*K*N / time\n\n", rounds);
  std::printf("%-28s %4s %5s %5s %3s | %8s | %8s %6s | %-10s %8s %6s\n", "shape", "T", "K", "N",
              "thr", "oneDNN", "default", "ratio", "best", "GFLOP/s", "ratio");
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  bool allCorrect = true;

  for (const BenchShape &shape : kShapes) {
    const int T = shape.T, K = shape.K, N = shape.N;
    std::vector<float> x(size_t(T) * K), w(size_t(N) * K), y(size_t(T) * N);
    for (float &v : x)
      v = dist(rng);
    for (float &v : w)
      v = dist(rng);
    std::vector<double> ref(size_t(T) * N);
    for (int t = 0; t < T; ++t)
      for (int n = 0; n < N; ++n) {
        double sum = 0;
        for (int k = 0; k < K; ++k)
          sum += double(x[size_t(t) * K + k]) * w[size_t(n) * K + k];
        ref[size_t(t) * N + n] = sum;
      }

    // Halide views of the same memory: x (k, t), weight (k, n), y (n, t).
    Buffer<float> xb(x.data(), K, T), wb(w.data(), K, N), yb(y.data(), N, T);
    std::vector<Impl> impls;
    std::deque<Buffer<float>> packedWeights; // stable addresses for raw_buffer()
    impls.push_back({"oneDNN", [&] {
                       dnnl_sgemm('N', 'T', T, N, K, 1.0f, x.data(), K, w.data(), K, 0.0f,
                                  y.data(), N);
                     }, {}});
    for (const GemmVariant &v : kVariants) {
      if (v.K != K || v.N != N)
        continue;
      Buffer<float> &packed = packedWeights.emplace_back(v.packed[0], v.packed[1], v.packed[2]);
      if (v.pack(wb.raw_buffer(), packed.raw_buffer()) != 0) {
        std::fprintf(stderr, "pack kernel %s failed\n", v.name);
        return 1;
      }
      auto gemm = v.gemm;
      halide_buffer_t *px = xb.raw_buffer(), *pw = packed.raw_buffer(), *py = yb.raw_buffer();
      impls.push_back({v.name, [gemm, px, pw, py] {
                         if (gemm(px, pw, py) != 0)
                           std::abort();
                       }, {}});
    }

    for (int threads : {1, 2}) {
      setThreads(threads);
      for (Impl &impl : impls) {
        std::fill(y.begin(), y.end(), NAN);
        impl.call();
        double err = relativeError(y.data(), ref);
        if (!(err <= 1e-5)) {
          std::printf("WRONG RESULT: %s on %dx%dx%d: relative error %.3g\n", impl.name.c_str(),
                      T, K, N, err);
          allCorrect = false;
        }
        impl.samples.clear();
      }
      // Calls per block: about 20 ms of the first implementation's work.
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < 3; ++i)
        impls[0].call();
      double once = seconds(std::chrono::steady_clock::now() - start) / 3;
      const int reps = std::clamp(static_cast<int>(0.02 / std::max(once, 1e-7)), 5, 400);
      for (int round = 0; round < rounds; ++round)
        for (Impl &impl : impls) {
          // OpenMP's workers spin for milliseconds after oneDNN returns (and
          // Halide's briefly): let them sleep before the next block.
          std::this_thread::sleep_for(std::chrono::milliseconds(40));
          for (int i = 0; i < 3; ++i)
            impl.call();
          for (int i = 0; i < reps; ++i) {
            auto t0 = std::chrono::steady_clock::now();
            impl.call();
            impl.samples.push_back(seconds(std::chrono::steady_clock::now() - t0));
          }
        }

      const double flop = 2.0 * T * K * N;
      double dnnl = flop / median(impls[0].samples) / 1e9;
      double def = flop / median(impls[1].samples) / 1e9;
      size_t best = 1;
      for (size_t i = 2; i < impls.size(); ++i)
        if (median(impls[i].samples) < median(impls[best].samples))
          best = i;
      double bestRate = flop / median(impls[best].samples) / 1e9;
      std::printf("%-28s %4d %5d %5d %3d | %8.1f | %8.1f %5.0f%% | %-10s %8.1f %5.0f%%\n",
                  shape.model, T, K, N, threads, dnnl, def, 100 * def / dnnl,
                  impls[best].name.c_str(), bestRate, 100 * bestRate / dnnl);
      std::fflush(stdout);
    }
  }
  std::printf("\nschedules:\n");
  for (const GemmVariant &v : kVariants)
    std::printf("  k%ld_n%ld %-10s %s\n", v.K, v.N, v.name, v.schedule);
  if (!allCorrect) {
    std::printf("\nFAILED: some results were wrong (see above)\n");
    return 1;
  }
  return 0;
}
