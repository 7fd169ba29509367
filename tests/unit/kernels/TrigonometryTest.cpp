//===- TrigonometryTest.cpp - vectorSinCos against libm ---------------------===//
//
// The rotary and sinusoidal position kernels take sin and cos from
// compiler/halide/Trigonometry.h instead of libm. Over the angles positions
// produce (up to max_seq radians, and beyond), in every quadrant and at the
// reduction's boundaries, they must agree with libm to a few ulps of double,
// so that the f32 values the kernels keep are libm's.
//
//===----------------------------------------------------------------------===//

#include "compiler/halide/Trigonometry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using namespace Halide;
using tmc::halide::constantTable;
using tmc::halide::vectorSinCos;

/// sin and cos of every angle, JIT-compiled with 8 double lanes as the kernels use them.
std::pair<std::vector<double>, std::vector<double>> evaluate(const std::vector<double> &angles) {
  Func input = constantTable(angles, "angle");
  Var i("i");
  tmc::halide::SinCos trig = vectorSinCos(input(i));
  Func out("trig");
  out(i) = Tuple(trig.sin, trig.cos);
  out.vectorize(i, 8, TailStrategy::GuardWithIf);
  Realization result = out.realize({static_cast<int>(angles.size())});
  Buffer<double> sines = result[0], cosines = result[1];
  std::vector<double> s(angles.size()), c(angles.size());
  for (size_t k = 0; k < angles.size(); ++k) {
    s[k] = sines(static_cast<int>(k));
    c[k] = cosines(static_cast<int>(k));
  }
  return {s, c};
}

TEST(VectorSinCos, AgreesWithLibmOverPositionAngles) {
  std::vector<double> angles;
  // Integer positions times rope and sinusoid frequencies, up to 2^17 radians.
  for (double frequency : {1.0, 0.5, 0.1, 1.0 / 3.0, 0.01, 1e-4})
    for (int p = 0; p < 4000; p += 7)
      angles.push_back(p * frequency);
  for (double a = 1.0; a < 131072.0; a *= 1.37)
    angles.push_back(a);
  // Quadrant boundaries and their neighbours, where the reduction switches.
  for (int k = 0; k < 64; ++k)
    for (double delta : {-1e-9, 0.0, 1e-9})
      angles.push_back(k * M_PI / 4 + delta);
  auto [s, c] = evaluate(angles);
  double worstSin = 0, worstCos = 0;
  for (size_t k = 0; k < angles.size(); ++k) {
    // Absolute error: the kernels add these to or multiply them with values
    // of order 1; relative error near a zero of sin or cos says nothing.
    worstSin = std::max(worstSin, std::abs(s[k] - std::sin(angles[k])));
    worstCos = std::max(worstCos, std::abs(c[k] - std::cos(angles[k])));
    ASSERT_NEAR(s[k], std::sin(angles[k]), 1e-14) << "sin(" << angles[k] << ")";
    ASSERT_NEAR(c[k], std::cos(angles[k]), 1e-14) << "cos(" << angles[k] << ")";
  }
  std::printf("max |error|: sin %.3g, cos %.3g over %zu angles\n", worstSin, worstCos,
              angles.size());
}

TEST(VectorSinCos, FloatValuesMatchLibmsRounding) {
  // What the kernels store: the f32 rounding of each value; it must be libm's
  // nearly always (a difference only where libm's double lies within a few
  // ulps of a float rounding boundary).
  std::vector<double> angles;
  for (int p = 0; p < 2048; ++p)
    for (int f = 0; f < 32; ++f)
      angles.push_back(p * std::pow(10000.0, -2.0 * f / 64.0));
  auto [s, c] = evaluate(angles);
  size_t differ = 0;
  for (size_t k = 0; k < angles.size(); ++k) {
    differ += static_cast<float>(s[k]) != static_cast<float>(std::sin(angles[k]));
    differ += static_cast<float>(c[k]) != static_cast<float>(std::cos(angles[k]));
  }
  EXPECT_LE(differ, angles.size() / 10000) << differ << " of " << 2 * angles.size();
}

} // namespace
