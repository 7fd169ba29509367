//===- GemmKernelTest.cpp - Pack + GEMM kernels against a double GEMM -----===//
//
// JIT-compiles the load-time pack kernel, the GEMM on packed weights and the
// pack-per-call GEMM for awkward shapes (N, K not multiples of the vector or
// panel width, N below one vector, K blocked with a short last block), each
// epilogue, token blocks, both x86 targets, and compares every output with a
// naive GEMM in double for T = 1, 5, 7 and 130 tokens:
// max |y - ref| / max |ref| <= 1e-5. Every row of a many-row call must also
// be bit-identical to the same row computed alone (T = 1, the decoding
// branch): a batched decoding step promises each sequence the logits it gets
// on its own.
//
//===----------------------------------------------------------------------===//

#include "compiler/KernelPlan.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"
#include "compiler/halide/Lowering.h"

#include "tests/unit/kernels/ParamFinder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

using namespace tmc;

namespace {

double activate(double x, const std::string &kind) {
  if (kind == "relu")
    return x > 0 ? x : 0;
  if (kind == "gelu")
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (kind == "gelu_tanh")
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  if (kind == "silu")
    return x / (1 + std::exp(-x));
  return x;
}

/// max |y - ref| / max |ref| against act(x W^T + b) in double.
double relativeError(const Halide::Buffer<float> &y, const Halide::Buffer<float> &x,
                     const Halide::Buffer<float> &w, const Halide::Buffer<float> *bias,
                     const std::string &activation) {
  const int K = x.dim(0).extent(), T = x.dim(1).extent(), N = w.dim(1).extent();
  double maxDiff = 0, maxRef = 1e-30;
  for (int t = 0; t < T; ++t)
    for (int n = 0; n < N; ++n) {
      double sum = bias ? (*bias)(n) : 0.0;
      for (int k = 0; k < K; ++k)
        sum += static_cast<double>(x(k, t)) * w(k, n);
      double ref = activate(sum, activation);
      maxDiff = std::max(maxDiff, std::abs(y(n, t) - ref));
      maxRef = std::max(maxRef, std::abs(ref));
    }
  return maxDiff / maxRef;
}

/// A shape and epilogue, and the schedule fields that differ from
/// defaultSchedule (-1: the default's).
struct GemmCase {
  const char *name;
  int64_t K, N;
  bool bias;
  const char *activation;
  int kBlock = 0, unrollK = 1;
  bool parallelRows = false, decodeVariant = true;
  int tileVectors = -1, tileRows = -1;
  int packTokens = -1; ///< 0 or 1; -1: the default's
  int tokenBlock = -1; ///< -1: the default's
  /// Non-null: the one target the case runs on (each JIT compilation costs
  /// about 15 s under ASan, and the case's point is target-independent).
  const char *onlyTarget = nullptr;
  int panelGroup = -1; ///< -1: the default's
  int rowsOuter = -1;  ///< 0 or 1; -1: the default's
};

void PrintTo(const GemmCase &c, std::ostream *os) { *os << c.name; }

const GemmCase kCases[] = {
    {"k37_n10_bias", 37, 10, true, "none"},
    {"k64_n100_relu", 64, 100, false, "relu"},
    {"k100_n7_bias_gelu", 100, 7, true, "gelu"},
    {"k19_n130_bias_gelu_tanh", 19, 130, true, "gelu_tanh"},
    {"k200_n64_silu", 200, 64, false, "silu"},
    {"k1_n1_bias_silu", 1, 1, true, "silu"},
    {"k300_n33_bias_blocked_tail", 300, 33, true, "none", 64, 2},
    {"k256_n80_bias_relu_blocked_unrolled", 256, 80, true, "relu", 64, 4},
    {"k48_n72_gelu_row_tasks", 48, 72, false, "gelu", 0, 2, true},
    {"k70_n20_bias_no_decode_variant", 70, 20, true, "relu", 0, 1, false, false},
    {"k130_n50_bias_relu_3x4_tile_blocked", 130, 50, true, "relu", 32, 1, false, true, 3, 4},
    {"k1100_n40_gelu_default_schedule", 1100, 40, false, "gelu", -1, -1},
    // A narrow bias-less head: LLVM unrolls the one-row tile's whole k loop.
    {"k32_n50_head_default_schedule", 32, 50, false, "none", -1, -1},
    {"k90_n70_bias_tokens_in_place", 90, 70, true, "gelu", -1, -1, false, true, -1, -1, 0},
    // A vocabulary head (6.3 MB of weights, rows on cache lines): the
    // default is its tile of 8 rows, 1 vector wide where the CPU splits zmm
    // operations, 3 elsewhere (AVX-512 only).
    {"k192_n8208_head_default_schedule", 192, 8208, false, "none", -1, -1, false, true, -1, -1, -1,
     -1, "x86-64-avx512"},
    // A bias-less sum unrolled by 4 over K - 1 = 191 steps, without token
    // blocks: with a guarded tail, the decoding tile's last steps were
    // separate products and adds, the many-row tile's FMAs (1 ulp apart).
    {"k192_n1600_unrolled_no_token_blocks", 192, 1600, false, "none", 0, 4, false, true, 3, 8, 1,
     0},
    // The same in K blocks of 256 (255 steps after each block's first
    // product), a schedule the tuner may pick.
    {"k768_n1600_blocked_unrolled_no_token_blocks", 768, 1600, false, "none", 256, 4, false, true,
     3, 8, 1, 0},
    // Blocks of 16 rows: T = 130 runs as blocks in parallel (a short last
    // one), T = 5 and 7 as one block; with K blocked too (AVX2's default).
    {"k40_n50_bias_relu_token_blocks", 40, 50, true, "relu", 0, 1, false, true, -1, -1, -1, 16,
     "x86-64-avx512"},
    {"k300_n33_bias_blocked_token_blocks", 300, 33, true, "none", 64, 2, false, true, -1, -1, -1,
     16, "x86-64-avx2"},
    // A vocabulary head with rows off cache lines (8200 = 16 x 512 + 8): the
    // default's 1 x 8 tile in groups of 16 panels (33 groups, the last of 1)
    // where the CPU splits zmm operations, else 3 x 8 in groups of 10 (18
    // groups, the last of 1).
    {"k160_n8200_head_panel_groups_default", 160, 8200, false, "none", -1, -1, false, true, -1, -1,
     -1, -1, "x86-64-avx512"},
    // Groups of 3 one-vector panels (the last group short) inside blocks of
    // 16 rows (T = 130: blocks in parallel; 5 and 7: one block). AVX2 only:
    // AVX-512 takes groups in the head case above.
    {"k40_n100_bias_relu_panel_groups_token_blocks", 40, 100, true, "relu", 0, 1, false, true, 1, 4,
     -1, 16, "x86-64-avx2", 3},
    // Row tasks in row-major order (rows_outer), inside blocks of 16 rows
    // (T = 130: blocks in parallel; 5 and 7: one block, its (row tile,
    // panel) pairs the tasks), and without blocks.
    {"k40_n50_relu_rows_outer_token_blocks", 40, 50, false, "relu", 0, 1, true, true, -1, -1, -1,
     16, "x86-64-avx512", -1, 1},
    {"k48_n72_gelu_rows_outer", 48, 72, false, "gelu", 0, 2, true, true, -1, -1, -1, 0,
     "x86-64-avx2", -1, 1},
};

class GemmKernelTest : public ::testing::TestWithParam<std::tuple<std::string, GemmCase>> {};

TEST_P(GemmKernelTest, MatchesDoubleGemm) {
  auto [targetName, c] = GetParam();
  test::TestTarget tt = test::testTarget(targetName);
  ASSERT_TRUE(tt.info) << tt.error;
  if (!tt.runsHere)
    GTEST_SKIP() << "this CPU has no AVX-512";

  KernelDesc desc = test::linearKernel(c.K, c.N, c.bias, c.activation);
  Schedule schedule = defaultSchedule(desc, *tt.info);
  if (c.kBlock >= 0)
    schedule.kBlock = c.kBlock;
  if (c.unrollK >= 0)
    schedule.unrollK = c.unrollK;
  schedule.parallelRows = c.parallelRows;
  schedule.decodeVariant = c.decodeVariant;
  if (c.tileVectors > 0)
    schedule.tileCols = c.tileVectors * schedule.vectorWidth;
  if (c.tileRows > 0)
    schedule.tileRows = c.tileRows;
  if (c.packTokens >= 0)
    schedule.packTokens = c.packTokens != 0;
  if (c.tokenBlock >= 0)
    schedule.tokenBlock = c.tokenBlock;
  if (c.panelGroup >= 0)
    schedule.panelGroup = c.panelGroup;
  if (c.rowsOuter >= 0)
    schedule.rowsOuter = c.rowsOuter != 0;
  const int K = static_cast<int>(c.K), N = static_cast<int>(c.N);

  std::mt19937 rng(static_cast<unsigned>(K * 1000 + N));
  Halide::Buffer<float> w = test::randomBuffer({K, N}, rng);
  Halide::Buffer<float> bias = test::randomBuffer({N}, rng);

  // Pack once, as the executor does after loading the weights.
  BufferShape packedShape = halide::packedWeightShape(desc, schedule);
  std::vector<int> packedExtents(packedShape.extents.begin(), packedShape.extents.end());
  halide::LoweredKernel pack = halide::lowerPackWeight(desc, schedule);
  Halide::Buffer<float> packed(packedExtents);
  test::realizeWith(pack, tt.halide, {{"weight", w}}, packed);
  ASSERT_FALSE(HasFatalFailure()) << "the pack kernel's inputs were not bound";
  // The contract: panel p, step k, lane j holds W[p * P + j][k], zero past N.
  const int P = packedExtents[0];
  for (int p = 0; p < packedExtents[2]; ++p)
    for (int k = 0; k < K; ++k)
      for (int j = 0; j < P; ++j)
        ASSERT_EQ(packed(j, k, p), p * P + j < N ? w(k, p * P + j) : 0.0f)
            << "packed(" << j << ", " << k << ", " << p << ")";

  halide::LoweredKernel gemm = halide::lowerPackedLinear(desc, schedule);
  halide::LoweredKernel perCall = halide::lowerLinear(desc, schedule);
  for (int T : {1, 5, 7, 130}) {
    Halide::Buffer<float> x = test::randomBuffer({K, T}, rng);
    std::map<std::string, Halide::Buffer<>> inputs = {
        {"x", x}, {"packed_weight", packed}, {"weight", w}, {"bias", bias}};
    Halide::Buffer<float> y(N, T);
    test::realizeWith(gemm, tt.halide, inputs, y);
    ASSERT_FALSE(HasFatalFailure()) << "the GEMM's inputs were not bound";
    EXPECT_LE(relativeError(y, x, w, c.bias ? &bias : nullptr, c.activation), 1e-5)
        << "packed GEMM, T=" << T << ", " << schedule.str();
    test::expectRowsMatchAlone(gemm, tt.halide, inputs, y, "packed GEMM, " + schedule.str());
    Halide::Buffer<float> y2(N, T);
    test::realizeWith(perCall, tt.halide, inputs, y2);
    ASSERT_FALSE(HasFatalFailure()) << "the per-call GEMM's inputs were not bound";
    EXPECT_LE(relativeError(y2, x, w, c.bias ? &bias : nullptr, c.activation), 1e-5)
        << "pack-per-call GEMM, T=" << T << ", " << schedule.str();
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, GemmKernelTest,
                         ::testing::ValuesIn(test::targetCases({"x86-64-avx2", "x86-64-avx512"},
                                                               kCases)),
                         [](const auto &info) { return test::targetCaseName(info); });

} // namespace
