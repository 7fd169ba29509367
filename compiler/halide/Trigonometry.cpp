//===- Trigonometry.cpp - sin and cos as vector arithmetic ----------------===//

#include "compiler/halide/Trigonometry.h"

#include <algorithm>

using namespace Halide;

namespace tmc::halide {

namespace {

/// p(x) = c[0] + c[1] x + ... by Horner's rule.
Expr horner(const Expr &x, const std::vector<double> &coefficients) {
  Expr sum = Expr(coefficients.back());
  for (size_t i = coefficients.size() - 1; i-- > 0;)
    sum = sum * x + Expr(coefficients[i]);
  return sum;
}

} // namespace

SinCos vectorSinCos(const Expr &angle) {
  // Cody-Waite reduction by pi/2 (fdlibm's pio2_1, 33 bits, and its tail
  // pio2_1t): k * pio2_1 is exact for |k| < 2^20, so r = angle - k pi/2 keeps
  // the angle's full precision.
  // Halide converts a C++ double to a float constant: wrap them as Exprs.
  const Expr twoOverPi(6.36619772367581382433e-01);
  const Expr pio2Head(1.57079632673412561417e+00);
  const Expr pio2Tail(6.07710050650619224932e-11);
  Expr a = cast<double>(angle);
  Expr k = round(a * twoOverPi);
  // strict_float: Halide's simplifier would otherwise fold the two products
  // into k * (pio2Head + pio2Tail), pi/2 rounded, and lose the tail (1e-14
  // at 273 radians).
  Expr r = strict_float((a - k * pio2Head) - k * pio2Tail); // |r| <= pi/4 (+ rounding)
  Expr r2 = r * r;
  // Taylor series to x^17 and x^18: on |r| <= pi/4 the first omitted terms
  // are below 1e-19, under double's rounding.
  std::vector<double> sinTerms, cosTerms;
  double factorial = 1.0;
  for (int n = 1; n <= 18; ++n) {
    factorial *= n;
    double sign = ((n / 2) % 2 == 0) ? 1.0 : -1.0;
    (n % 2 ? sinTerms : cosTerms).push_back(sign / factorial);
  }
  cosTerms.insert(cosTerms.begin(), 1.0);
  Expr s = r * horner(r2, sinTerms);
  Expr c = horner(r2, cosTerms);
  // The quadrant: sin(r + q pi/2) cycles sin, cos, -sin, -cos.
  Expr q = cast<int32_t>(cast<int64_t>(k) % 4);
  Expr sine = select(q == 0, s, q == 1, c, q == 2, -s, -c);
  Expr cosine = select(q == 0, c, q == 1, -s, q == 2, -c, s);
  return {sine, cosine};
}

Func constantTable(const std::vector<double> &values, const std::string &name, int padTo) {
  // Padded with the last value to a whole number of `padTo` entries.
  const int size = static_cast<int>((values.size() + padTo - 1) / padTo * padTo);
  Buffer<double> buffer(size, name + "_data");
  for (int i = 0; i < size; ++i)
    buffer(i) = values[std::min<size_t>(i, values.size() - 1)];
  Var i("i");
  Func table(name);
  table(i) = buffer(clamp(i, 0, size - 1));
  return table;
}

} // namespace tmc::halide
