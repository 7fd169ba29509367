//===- NormKernelTest.cpp - LayerNorm/RMSNorm against a double reference --===//
//
// JIT-compiles the norm kernels (layernorm with a bias, rmsnorm; alone and
// with the residual add fused) under both placements of their row stages
// (Schedule::stageRows: the sum and centered row stored per token, or fused
// into each pass) for both x86 targets, at a width of whole vectors and an
// awkward one (37: one chain of adds; 100: sums in 4 lanes, on both
// targets), and compares with a naive double norm:
// max |y - ref| / max |ref| <= 1e-5.
//
//===----------------------------------------------------------------------===//

#include "compiler/KernelPlan.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"
#include "compiler/halide/Lowering.h"

#include "tests/unit/kernels/ParamFinder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace tmc;

namespace {

using test::ParamFinder;

// target, rmsnorm, residual, width, stage rows
using Param = std::tuple<std::string, bool, bool, int, bool>;

class NormKernelTest : public ::testing::TestWithParam<Param> {};

TEST_P(NormKernelTest, MatchesDoubleNorm) {
  auto [targetName, rms, residual, width, stageRows] = GetParam();
  test::TestTarget tt = test::testTarget(targetName);
  ASSERT_TRUE(tt.info) << tt.error;
  if (!tt.runsHere)
    GTEST_SKIP() << "this CPU has no AVX-512";

  KernelDesc kernel;
  kernel.kind = residual ? KernelKind::add_norm : KernelKind::norm;
  kernel.variant = rms ? "rmsnorm" : "layernorm";
  kernel.width = width;
  kernel.eps = 1e-5;
  kernel.hasBias = !rms;
  Schedule schedule = defaultSchedule(kernel, *tt.info);
  schedule.stageRows = stageRows;
  halide::LoweredKernel lowered = halide::lowerNorm(kernel, schedule);

  ParamFinder finder;
  lowered.output.function().accept(&finder);
  for (auto &[name, fn] : Halide::Internal::find_transitive_calls(lowered.output.function()))
    fn.accept(&finder);

  const int T = 5;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  Halide::Buffer<float> x(width, T), r(width, T), gamma(width), beta(width);
  for (Halide::Buffer<float> *b : {&x, &r, &gamma, &beta})
    b->for_each_value([&](float &v) { v = dist(rng); });
  // Rows with a large mean: a one-pass variance (E[x^2] - E[x]^2) would
  // cancel catastrophically; the kernel's two passes must not, staged or not.
  x.for_each_value([](float &v) { v += 50.0f; });
  finder.params.at("x").set_buffer(Halide::Buffer<>(x));
  if (residual)
    finder.params.at("residual").set_buffer(Halide::Buffer<>(r));
  finder.params.at("weight").set_buffer(Halide::Buffer<>(gamma));
  if (kernel.hasBias)
    finder.params.at("bias").set_buffer(Halide::Buffer<>(beta));
  Halide::Buffer<float> y = lowered.output.realize({width, T}, tt.halide);

  double maxDiff = 0, maxRef = 1e-30;
  for (int t = 0; t < T; ++t) {
    std::vector<double> row(width);
    double mean = 0;
    for (int c = 0; c < width; ++c) {
      row[c] = double(x(c, t)) + (residual ? double(r(c, t)) : 0.0);
      mean += row[c] / width;
    }
    if (rms)
      mean = 0;
    double var = 0;
    for (int c = 0; c < width; ++c)
      var += (row[c] - mean) * (row[c] - mean) / width;
    for (int c = 0; c < width; ++c) {
      double ref = (row[c] - mean) / std::sqrt(var + kernel.eps) * gamma(c) +
                   (kernel.hasBias ? double(beta(c)) : 0.0);
      double diff = std::abs(y(c, t) - ref);
      maxDiff = std::isnan(diff) ? INFINITY : std::max(maxDiff, diff);
      maxRef = std::max(maxRef, std::abs(ref));
    }
  }
  EXPECT_LE(maxDiff / maxRef, 1e-5);
}

std::string paramName(const ::testing::TestParamInfo<Param> &info) {
  auto [target, rms, residual, width, stageRows] = info.param;
  return std::string(target == "x86-64-avx2" ? "avx2" : "avx512") + "_" +
         (residual ? "add_" : "") + (rms ? "rmsnorm" : "layernorm") + "_w" +
         std::to_string(width) + (stageRows ? "_staged" : "_fused");
}

INSTANTIATE_TEST_SUITE_P(
    Norms, NormKernelTest,
    ::testing::Combine(::testing::ValuesIn(test::suiteTargets({"x86-64-avx2", "x86-64-avx512"})),
                       ::testing::Bool(), ::testing::Bool(), ::testing::Values(64, 37, 100),
                       ::testing::Bool()),
    paramName);

} // namespace
