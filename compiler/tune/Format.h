//===- Format.h - Number formatting shared by the tuner and its report --*- C++ -*-===//
#pragma once

#include <cstdio>
#include <string>

namespace tmc::tune {

/// Milliseconds with 4 significant digits (kernels run from microseconds to seconds).
inline std::string ms(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

/// `value` with `digits` digits after the point.
inline std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

} // namespace tmc::tune
