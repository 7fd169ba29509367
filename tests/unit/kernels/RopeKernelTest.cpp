//===- RopeKernelTest.cpp - Rotary positions: table, kernel, GEMM epilogue -===//
//
// The rope_table kernel's rows against cos and sin in double; the rope
// kernel against the rotate-half rotation of its input by those rows; and a
// linear with rope_columns (tmk-fuse-rope-epilogue) against the same linear
// without them, its first columns rotated in double afterwards: in the
// register tile (a panel of whole heads) and in the second stage (any other
// tile, and AVX2's heads of 64), for f32, bf16, int8 and q4, T = 1, 5, 7
// and 130 at a nonzero offset. Rows of a many-row call must equal the rows
// computed alone (the decoding branch), as for every GEMM.
//
//===----------------------------------------------------------------------===//

#include "compiler/KernelPlan.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"
#include "compiler/halide/Lowering.h"

#include "tests/unit/kernels/ParamFinder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>

using namespace tmc;

namespace {

constexpr int kOffset = 37; // positions offset + t

/// The table rows as the contract says: cos(p w_i), then sin(p w_i), in
/// double rounded to f32.
Halide::Buffer<float> referenceTable(int headDim, double theta, int T) {
  const int half = headDim / 2;
  Halide::Buffer<float> table(headDim, T);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < half; ++i) {
      double angle = (kOffset + t) * std::pow(theta, -2.0 * i / headDim);
      table(i, t) = static_cast<float>(std::cos(angle));
      table(half + i, t) = static_cast<float>(std::sin(angle));
    }
  return table;
}

/// Rotate-half of feature n of row `row` (heads of headDim), in double.
double turned(const std::function<double(int)> &row, const Halide::Buffer<float> &table, int t,
              int n, int headDim) {
  const int half = headDim / 2, c = n % headDim, f = c % half;
  const double partner = c < half ? -row(n + half) : row(n - half);
  return row(n) * table(f, t) + partner * table(half + f, t);
}

TEST(RopeTableKernel, RowsAreCosThenSinOfThePositions) {
  test::TestTarget tt = test::testTarget("x86-64-avx2");
  ASSERT_TRUE(tt.info) << tt.error;
#ifdef TMC_SANITIZED
  const int headDims[] = {40}; // each JIT compilation costs about 15 s there
#else
  const int headDims[] = {64, 40};
#endif
  for (int headDim : headDims) {
    KernelDesc desc{KernelKind::rope_table};
    desc.width = desc.headDim = headDim;
    desc.theta = 10000;
    halide::LoweredKernel kernel = halide::lowerRopeTable(desc, defaultSchedule(desc, *tt.info));
    const int T = 130;
    Halide::Buffer<float> rows(headDim, T);
    auto params = test::findParams(kernel.output);
    ASSERT_TRUE(params.count("offset"));
    params.at("offset").set_scalar<int32_t>(kOffset);
    kernel.output.realize(rows, tt.halide);
    Halide::Buffer<float> want = referenceTable(headDim, 10000, T);
    for (int t = 0; t < T; ++t)
      for (int c = 0; c < headDim; ++c)
        ASSERT_NEAR(rows(c, t), want(c, t), 2e-7)
            << "head_dim " << headDim << ", (" << c << ", " << t << ")";
  }
}

TEST(RopeKernel, TurnsEachHeadByItsTableRow) {
  test::TestTarget tt = test::testTarget("x86-64-avx2");
  ASSERT_TRUE(tt.info) << tt.error;
  const int heads = 3, headDim = 40, T = 9;
  KernelDesc desc{KernelKind::rope};
  desc.heads = heads;
  desc.headDim = headDim;
  desc.width = heads * headDim;
  halide::LoweredKernel kernel = halide::lowerRope(desc, defaultSchedule(desc, *tt.info));
  std::mt19937 rng(7);
  Halide::Buffer<float> x = test::randomBuffer({headDim, heads, T}, rng);
  Halide::Buffer<float> table = referenceTable(headDim, 500000, T);
  Halide::Buffer<float> y(headDim, heads, T);
  test::realizeWith(kernel, tt.halide, {{"x", x}, {"table", table}}, y);
  ASSERT_FALSE(HasFatalFailure());
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < heads; ++h)
      for (int d = 0; d < headDim; ++d) {
        auto row = [&](int c) { return static_cast<double>(x(c % headDim, c / headDim, t)); };
        EXPECT_NEAR(y(d, h, t), turned(row, table, t, h * headDim + d, headDim), 1e-6)
            << "(" << d << ", " << h << ", " << t << ")";
      }
}

/// A linear with a rotary epilogue: shape, heads and the tile (-1: the
/// default's, which fits whole heads into a panel where it can).
struct RopeGemmCase {
  const char *name;
  int64_t K, N, ropeColumns, headDim;
  bool bias;
  const char *precision;
  int tileVectors = -1, tileRows = -1;
  /// Whether the case also runs under the sanitizers (each JIT compilation
  /// costs about 15 s there; the lowering code is the same for all).
  bool sanitized = false;
};

void PrintTo(const RopeGemmCase &c, std::ostream *os) { *os << c.name; }

const RopeGemmCase kCases[] = {
    // q, k and v of 64 (AVX-512: in the tile; AVX2: heads of 64 take the
    // second stage).
    {"k40_n192_q64k64_f32", 40, 192, 128, 64, false, "f32", -1, -1, true},
    {"k33_n160_heads32_bias_f32", 33, 160, 96, 32, true, "f32"},
    // Halves of 24: stored in vectors of 8 (AVX-512) or 8 (AVX2).
    {"k50_n144_heads48_f32", 50, 144, 96, 48, true, "f32"},
    // A tile of 3 vectors: never whole heads of 64, so the second stage.
    {"k40_n192_second_stage_f32", 40, 192, 128, 64, true, "f32", 3, 4},
    // Every column rotated (a q projection alone).
    {"k64_n128_all_rotated_f32", 64, 128, 128, 32, false, "f32"},
    {"k96_n192_bias_int8", 96, 192, 128, 64, true, "int8"},
    {"k64_n128_q4", 64, 128, 64, 32, true, "q4"},
    {"k48_n128_bf16", 48, 128, 128, 64, false, "bf16"},
};

class RopeGemmKernelTest : public ::testing::TestWithParam<std::tuple<std::string, RopeGemmCase>> {
};

/// The packed weight of `desc` under `schedule`, packed as the executor
/// does at load (in the element type of the precision's layout).
Halide::Buffer<> packWeight(const KernelDesc &desc, const Schedule &schedule,
                            const test::TestTarget &tt, const Halide::Buffer<float> &w) {
  BufferShape shape = halide::packedWeightShape(desc, schedule);
  std::vector<int> extents(shape.extents.begin(), shape.extents.end());
  Halide::Type type = shape.isInt8   ? Halide::Int(8)
                      : shape.isBF16 ? Halide::BFloat(16)
                                     : Halide::Float(32);
  Halide::Buffer<> packed(type, extents);
  // Reduced precisions pack without dot-product instructions (Target.h).
  Halide::Target target(withoutDotProducts(*tt.info).halideTarget);
  test::realizeWith(halide::lowerPackWeight(desc, schedule), target, {{"weight", w}}, packed);
  return packed;
}

TEST_P(RopeGemmKernelTest, MatchesThePlainLinearTurnedInDouble) {
  auto [targetName, c] = GetParam();
#ifdef TMC_SANITIZED
  if (!c.sanitized)
    GTEST_SKIP() << "the main build runs this case";
#endif
  test::TestTarget tt = test::testTarget(targetName);
  ASSERT_TRUE(tt.info) << tt.error;
  if (!tt.runsHere)
    GTEST_SKIP() << "this CPU has no AVX-512";
  KernelDesc plain = test::linearKernel(c.K, c.N, c.bias, "none", c.precision);
  KernelDesc rope = plain;
  rope.ropeColumns = c.ropeColumns;
  rope.headDim = c.headDim;
  Schedule schedule = defaultSchedule(rope, *tt.info);
  if (c.tileVectors > 0)
    schedule.tileCols = c.tileVectors * schedule.vectorWidth;
  if (c.tileRows > 0)
    schedule.tileRows = c.tileRows;
  const int K = static_cast<int>(c.K), N = static_cast<int>(c.N);
  const int headDim = static_cast<int>(c.headDim);

  std::mt19937 rng(static_cast<unsigned>(K * 1000 + N));
  Halide::Buffer<float> w = test::randomBuffer({K, N}, rng);
  Halide::Buffer<float> bias = test::randomBuffer({N}, rng);
  // One layout serves both kernels: the epilogue does not change the packing.
  Halide::Buffer<> packed = packWeight(plain, schedule, tt, w);
  ASSERT_FALSE(HasFatalFailure()) << "the pack kernel's inputs were not bound";

  halide::LoweredKernel withRope = halide::lowerPackedLinear(rope, schedule);
  halide::LoweredKernel without = halide::lowerPackedLinear(plain, schedule);
  for (int T : {1, 5, 7, 130}) {
    Halide::Buffer<float> x = test::randomBuffer({K, T}, rng);
    Halide::Buffer<float> table = referenceTable(headDim, 10000, T);
    std::map<std::string, Halide::Buffer<>> inputs = {
        {"x", x}, {"packed_weight", packed}, {"bias", bias}, {"rope_table", table}};
    Halide::Buffer<float> y(N, T), sums(N, T);
    test::realizeWith(withRope, tt.halide, inputs, y);
    ASSERT_FALSE(HasFatalFailure()) << "the rope GEMM's inputs were not bound";
    test::realizeWith(without, tt.halide, inputs, sums);
    ASSERT_FALSE(HasFatalFailure()) << "the plain GEMM's inputs were not bound";
    double maxDiff = 0, maxRef = 1e-30;
    for (int t = 0; t < T; ++t)
      for (int n = 0; n < N; ++n) {
        auto row = [&](int col) { return static_cast<double>(sums(col, t)); };
        double ref = n < c.ropeColumns ? turned(row, table, t, n, headDim) : row(n);
        maxDiff = std::max(maxDiff, std::abs(y(n, t) - ref));
        maxRef = std::max(maxRef, std::abs(ref));
      }
    EXPECT_LE(maxDiff / maxRef, 1e-6) << "T=" << T << ", " << schedule.str();
    test::expectRowsMatchAlone(withRope, tt.halide, inputs, y, "rope GEMM, " + schedule.str());
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, RopeGemmKernelTest,
                         ::testing::ValuesIn(test::targetCases({"x86-64-avx2", "x86-64-avx512"},
                                                               kCases)),
                         [](const auto &info) { return test::targetCaseName(info); });

} // namespace
