//===- MeasureHarness.cpp - The program that times one candidate kernel ---===//
//
// Not part of tmc: `tmc tune` (Measure.cpp) compiles this file at tune time
// and links it with each candidate schedule's kernel into an executable of
// its own. What depends on the kernel comes from "tune_kernel.h", which the
// tuner writes into its measuring directory (KernelBench::harnessSource): the
// candidate's declarations, its arguments' shapes and the call. A linear
// kernel's packed weight layout depends on the schedule, so the panel width
// and count come as -DTMC_P= and -DTMC_PANELS= (one object per panel shape;
// a bf16 GEMM's K pairs as -DTMC_BF16_PAIRS=, an int8 or q4 one's packed
// rows as -DTMC_QUANT_ROWS=).
//
//   harness ref FILE     runs and times the kernel, writes its outputs to FILE
//   harness check FILE   the same, comparing its outputs with FILE's
//
// It prints "result P10 MIN SPREAD MAX_ERROR DECODE_P10 MEDIAN" (milliseconds
// and relative error), which KernelBench::run reads. The build compiles it
// too, with a stand-in kernel (tests/unit/tune/harness/), so that warnings
// and the sanitizers see it.
//
//===----------------------------------------------------------------------===//

#include "HalideRuntime.h"
// Buffers start where the executor's do: a plain vector's large block sits
// 16 bytes past a page boundary, and every vector load from it then splits
// two cache lines (5-10% slower GEMMs than the compiled model runs, on Zen 4).
#include "runtime/aligned.h"
#include "runtime/half.h"
#include "runtime/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

/// An extent that is the run's token count T.
constexpr int64_t kT = -1;

/// One argument of the kernel, as tune_kernel.h lists them.
struct Argument {
  int rank;            ///< 0: a scalar, which the call passes itself
  int64_t extents[4];  ///< innermost first; kT: the run's T
  bool isInt;          ///< int32 ids in [0, maxInt), else floats in [-1, 1)
  int32_t maxInt;
  /// 16-bit words (a kv_cache = f16 | bf16 attention's keys and values):
  /// the bf16 bits of floats in [-1, 1), which read as f16 are finite too.
  bool isBits16;
  /// A packed table an embedding reads in its tied head's precision: bf16
  /// values in [-1, 1), or int8 bytes in [0x30, 0x40), so that any four of
  /// them read as a scale are a normal f32 (and two as a normal f16).
  bool isBF16;
  bool isInt8;
  /// Rows past T in its extent of T: a window cache's earlier keys and
  /// values (rowsBeforeTokens, MemoryLimit.h).
  int64_t extraRows;
};

/// Seeded pseudo-random contents of one argument and its halide_buffer_t.
struct Buf {
  tmr::AlignedVector<float> f;
  tmr::AlignedVector<int32_t> i;
  tmr::AlignedVector<uint16_t> h;
  tmr::AlignedVector<int8_t> q;
  halide_buffer_t b{};
  halide_dimension_t d[4]{};
  /// `rank` extents, innermost first.
  Buf(const int64_t *ext, int rank, bool isInt, int32_t maxInt, uint32_t seed,
      bool isBits16 = false, bool isBF16 = false, bool isInt8 = false) {
    int64_t n = 1;
    for (int k = 0; k < rank; ++k)
      n *= ext[k];
    uint32_t s = seed * 2654435761u + 12345u;
    auto next = [&] {
      s = s * 1664525u + 1013904223u;
      return s >> 8;
    };
    if (isInt) {
      i.resize(n);
      for (auto &v : i)
        v = static_cast<int32_t>(next() % static_cast<uint32_t>(maxInt));
      b.host = reinterpret_cast<uint8_t *>(i.data());
      b.type = halide_type_t(halide_type_int, 32);
    } else if (isBits16 || isBF16) {
      h.resize(n);
      for (auto &v : h)
        v = tmr::floatToBfloat16(static_cast<float>(next()) / 8388608.0f - 1.0f);
      b.host = reinterpret_cast<uint8_t *>(h.data());
      b.type = isBF16 ? halide_type_t(halide_type_bfloat, 16) : halide_type_t(halide_type_uint, 16);
    } else if (isInt8) {
      q.resize(n);
      for (auto &v : q)
        v = static_cast<int8_t>(0x30 + next() % 16);
      b.host = reinterpret_cast<uint8_t *>(q.data());
      b.type = halide_type_t(halide_type_int, 8);
    } else {
      f.resize(n);
      for (auto &v : f)
        v = static_cast<float>(next()) / 8388608.0f - 1.0f;
      b.host = reinterpret_cast<uint8_t *>(f.data());
      b.type = halide_type_t(halide_type_float, 32);
    }
    int32_t stride = 1;
    for (int k = 0; k < rank; ++k) {
      d[k] = halide_dimension_t(0, static_cast<int32_t>(ext[k]), stride);
      stride *= static_cast<int32_t>(ext[k]);
    }
    b.dimensions = rank;
    b.dim = d;
  }
  Buf(const Buf &) = delete;
  Buf &operator=(const Buf &) = delete;
};

} // namespace

// extern "C" declarations of tmk_cand (and tmk_cand_decode, tmk_cand_pack)
// and namespace kernel: kTokens, kArguments, call(), and for a linear kernel
// kPackedWeight and kPackedK.
#include "tune_kernel.h"

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Argument `a`'s buffer at T tokens (seed a + 1), or null for a scalar.
std::unique_ptr<Buf> makeBuffer(size_t a, int64_t T) {
  const Argument &arg = kernel::kArguments[a];
  if (arg.rank == 0)
    return nullptr;
  int64_t extents[4];
  for (int d = 0; d < arg.rank; ++d)
    extents[d] = arg.extents[d] == kT ? T + arg.extraRows : arg.extents[d];
  return std::make_unique<Buf>(extents, arg.rank, arg.isInt, arg.maxInt,
                               static_cast<uint32_t>(a + 1), arg.isBits16, arg.isBF16, arg.isInt8);
}

/// Runs the kernel at T tokens; times it when `times` is given.
int run(int64_t T, std::vector<float> *output, std::vector<double> *times, double minSeconds) {
  constexpr size_t count = sizeof(kernel::kArguments) / sizeof(kernel::kArguments[0]);
  std::unique_ptr<Buf> args[count];
  halide_buffer_t *buffers[count];
  for (size_t a = 0; a < count; ++a) {
    args[a] = makeBuffer(a, T);
    buffers[a] = args[a] ? &args[a]->b : nullptr;
  }
#ifdef TMC_P
  // A linear kernel reads its weight (argument kPackedWeight) packed.
#ifdef TMC_BF16_PAIRS
  // bf16 pairs (LowerPack.cpp): the float storage holds twice what they need.
  const int64_t panels[] = {2, TMC_P, TMC_BF16_PAIRS, TMC_PANELS};
  Buf packed(panels, 4, false, 1, 99);
  packed.b.type = halide_type_t(halide_type_bfloat, 16);
#elif defined(TMC_QUANT_ROWS)
  // int8 or q4 rows of quads (LowerPack.cpp), in float storage four times
  // their size.
  const int64_t panels[] = {4, TMC_P, TMC_QUANT_ROWS, TMC_PANELS};
  Buf packed(panels, 4, false, 1, 99);
  packed.b.type = halide_type_t(halide_type_int, 8);
#else
  const int64_t panels[] = {TMC_P, kernel::kPackedK, TMC_PANELS};
  Buf packed(panels, 3, false, 1, 99);
#endif
  if (int e = tmk_cand_pack(buffers[kernel::kPackedWeight], &packed.b)) {
    std::fprintf(stderr, "pack kernel failed: %d\n", e);
    return e;
  }
  buffers[kernel::kPackedWeight] = &packed.b;
#endif
  auto once = [&] { return kernel::call(T, buffers); };
  if (int e = once()) {
    std::fprintf(stderr, "kernel failed: %d\n", e);
    return e;
  }
  if (times) {
    for (int w = 0; w < 2; ++w)
      once();
    double start = now();
    while ((times->size() < 7 || now() - start < minSeconds) && times->size() < 2000) {
      double t0 = now();
      once();
      times->push_back((now() - t0) * 1e3);
    }
  }
  // The output is the last argument.
  output->assign(args[count - 1]->f.begin(), args[count - 1]->f.end());
  return 0;
}

/// The largest difference between `outputs` and the reference in `path`,
/// relative to the reference's largest magnitude; -1 if it cannot be read.
double maxRelativeError(const std::vector<float> &outputs, const char *path) {
  std::vector<float> ref(outputs.size());
  std::FILE *f = std::fopen(path, "rb");
  if (!f || std::fread(ref.data(), sizeof(float), ref.size(), f) != ref.size()) {
    if (f)
      std::fclose(f);
    return -1;
  }
  std::fclose(f);
  double scale = 1e-30, maxError = 0;
  for (float v : ref)
    scale = std::max(scale, std::fabs(static_cast<double>(v)));
  for (size_t k = 0; k < ref.size(); ++k)
    maxError = std::max(maxError, std::fabs(static_cast<double>(outputs[k]) - ref[k]) / scale);
  return maxError;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: harness ref|check FILE\n");
    return 2;
  }
  // Parallel loops on the pool the executables use (runtime/thread_pool.h),
  // HL_NUM_THREADS threads (the tuner's --threads).
  tmr::useThreads(0);
  std::vector<float> big, small;
  std::vector<double> times;
  std::vector<double> decode;
  if (run(kernel::kTokens, &big, &times, 0.25))
    return 3;
  if (run(1, &small, &decode, 0.05))
    return 3;
  big.insert(big.end(), small.begin(), small.end());
  for (float v : big)
    if (!std::isfinite(v)) {
      std::fprintf(stderr, "non-finite output\n");
      return 4;
    }
  double maxError = 0;
  if (std::strcmp(argv[1], "ref") == 0) {
    std::FILE *f = std::fopen(argv[2], "wb");
    if (!f || std::fwrite(big.data(), sizeof(float), big.size(), f) != big.size())
      return 5;
    std::fclose(f);
  } else if ((maxError = maxRelativeError(big, argv[2])) < 0) {
    std::fprintf(stderr, "cannot read the reference output\n");
    return 5;
  }
  std::sort(times.begin(), times.end());
  size_t n = times.size();
  double median = times[n / 2], p10 = times[n / 10], p90 = times[n - 1 - n / 10];
  std::sort(decode.begin(), decode.end());
  // The score is the 10th percentile: on a shared machine the median
  // measures the other processes as much as the kernel.
  std::printf("result %.6f %.6f %.6f %.9g %.6f %.6f\n", p10, times[0], (p90 - p10) / median,
              maxError, decode[decode.size() / 10], median);
  return 0;
}
