//===- Trigonometry.h - sin and cos as vector arithmetic ---------*- C++ -*-===//
//
// Positions enter a model through sines and cosines of angles up to max_seq
// radians (sinusoidal encodings, rotary positions). Halide 14 lowers sin and
// cos of a double to a scalar libm call per lane, and pow likewise: a rope
// kernel spent several ns per element in `sincos` and `pow`. Here the
// frequencies are constants of the kernel and sin/cos are polynomials after
// an exact range reduction, all in double (so vectorized FMAs, no calls),
// agreeing with libm to a few ulps of double: far below the f32 they feed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Halide.h"

#include <vector>

namespace tmc::halide {

struct SinCos {
  Halide::Expr sin, cos;
};

/// sin and cos of a double angle, valid for |angle| < 2^20 * pi / 2 (exact
/// reduction; positions times frequencies <= 1 stay far inside).
SinCos vectorSinCos(const Halide::Expr &angle);

/// A constant table of the kernel (embedded in its object), read as table(i),
/// its entries padded with the last value to a multiple of `padTo`: a loop
/// over the table rounded up to whole vectors of `padTo` lanes reads it
/// with dense loads (no clamp to resolve lane by lane).
Halide::Func constantTable(const std::vector<double> &values, const std::string &name,
                           int padTo = 1);

} // namespace tmc::halide
