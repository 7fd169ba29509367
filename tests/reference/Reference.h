//===- Reference.h - A plain evaluator of the spec semantics -----*- C++ -*-===//
//
// The oracle every kernel and every compiled executable is checked against: a
// direct, unoptimized transcription of docs/spec-language.md in double
// precision. It reads a ModelSpec (never the syntax tree) and weights by their
// canonical names, so it shares no code with the compiler beyond the spec.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/ModelSpec.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tmc::ref {

/// Returns the f32 data of a weight by canonical name, laid out row-major in
/// the manifest's shape; nullptr if absent.
using WeightLookup = std::function<const float *(const std::string &name)>;

/// Evaluates the spec's semantics directly, in double precision (every sum
/// accumulated in double). Returns [tokens.size() * outputWidth] row-major, or
/// std::nullopt with *error set for features it does not model (decoders,
/// rope, alibi, lm_head, classifier, f16/bf16) or for bad input (missing
/// weight, token out of range, too many tokens).
std::optional<std::vector<double>> evaluate(const ModelSpec &spec,
                                            const WeightLookup &weights,
                                            const std::vector<int32_t> &tokens,
                                            std::string *error);

/// gelu, erf form: x/2 * (1 + erf(x / sqrt(2))).
double gelu(double x);
/// gelu, tanh approximation (PyTorch approximate="tanh").
double geluTanh(double x);
/// silu: x * sigmoid(x).
double silu(double x);
/// The sinusoidal position encoding PE(p, j) of a d_model-wide model.
double sinusoidal(int64_t position, int64_t dim, int64_t dModel);

} // namespace tmc::ref
