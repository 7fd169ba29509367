//===- Reference.cpp - A plain evaluator of the spec semantics ------------===//
//
// Written to be read against docs/spec-language.md line by line, not to be
// fast: every intermediate is a [rows, cols] matrix of doubles and every loop
// is the textbook one. When a compiled model and this file disagree, this file
// should be the easy one to trust.
//
//===----------------------------------------------------------------------===//

#include "tests/reference/Reference.h"

#include "frontend/Manifest.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace tmc::ref {

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

double geluTanh(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }

double sinusoidal(int64_t position, int64_t dim, int64_t dModel) {
  // Dimensions 2i and 2i+1 share the frequency 1 / 10000^(2i/d).
  double evenDim = static_cast<double>(dim - dim % 2);
  double angle = static_cast<double>(position) /
                 std::pow(10000.0, evenDim / static_cast<double>(dModel));
  return dim % 2 == 0 ? std::sin(angle) : std::cos(angle);
}

namespace {

/// A row-major [rows, cols] matrix of doubles.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<double> data;

  Matrix() = default;
  Matrix(int64_t rows, int64_t cols)
      : rows(rows), cols(cols), data(static_cast<size_t>(rows * cols), 0.0) {}
  double &at(int64_t r, int64_t c) { return data[r * cols + c]; }
  double at(int64_t r, int64_t c) const { return data[r * cols + c]; }
};

Matrix add(const Matrix &a, const Matrix &b) {
  Matrix out = a;
  for (size_t i = 0; i < out.data.size(); ++i)
    out.data[i] += b.data[i];
  return out;
}

/// Why the evaluator refuses a spec, or "" if it models every feature used.
std::string unsupportedFeature(const ModelSpec &spec) {
  if (spec.dtype != DType::F32)
    return "dtype f16/bf16 is not modelled (only f32)";
  if (spec.decoder.present)
    return "decoder stacks are not modelled (encoder-only)";
  if (!spec.encoder.present)
    return "the model has no encoder stack";
  if (spec.position == PositionKind::Rope)
    return "position = rope is not modelled";
  if (spec.position == PositionKind::Alibi)
    return "position = alibi is not modelled";
  if (spec.output == OutputKind::LMHead)
    return "output = lm_head is not modelled (only hidden)";
  if (spec.output == OutputKind::Classifier)
    return "output = classifier is not modelled (only hidden)";
  const StackSpec &enc = spec.encoder;
  if (enc.layers < 0 || enc.heads <= 0 || enc.kvHeads <= 0 ||
      enc.headDim <= 0 || enc.dFF <= 0 || enc.heads % enc.kvHeads != 0)
    return "encoder shape is invalid (heads " + std::to_string(enc.heads) +
           ", kv_heads " + std::to_string(enc.kvHeads) + ", head_dim " +
           std::to_string(enc.headDim) + ", d_ff " + std::to_string(enc.dFF) +
           ")";
  if (spec.dModel <= 0 || spec.vocab <= 0 || spec.maxSeq <= 0)
    return "model shape is invalid (vocab, d_model and max_seq must be > 0)";
  return "";
}

class Evaluator {
public:
  Evaluator(const ModelSpec &spec, const WeightLookup &weights)
      : spec(spec), weights(weights) {}

  Matrix run(const std::vector<int32_t> &tokens) {
    Matrix x = embed(tokens);
    const StackSpec &enc = spec.encoder;
    for (int64_t i = 0; i < enc.layers; ++i)
      x = layer(x, enc, "encoder.layers." + std::to_string(i));
    if (enc.finalNorm)
      x = norm(x, *enc.finalNorm, "encoder.final_norm");
    return x;
  }

private:
  /// Every manifest tensor was checked present before run(); tensors the
  /// manifest does not list (biases under bias = false) are never asked for,
  /// so stray extras in a weight file cannot leak in.
  const float *weight(const std::string &name) const { return weights(name); }

  Matrix embed(const std::vector<int32_t> &tokens) {
    int64_t t = static_cast<int64_t>(tokens.size()), d = spec.dModel;
    const float *table = weight("embed.tokens");
    double scale = spec.embedScale ? std::sqrt(static_cast<double>(d)) : 1.0;
    Matrix x(t, d);
    for (int64_t p = 0; p < t; ++p)
      for (int64_t j = 0; j < d; ++j)
        x.at(p, j) = static_cast<double>(table[tokens[p] * d + j]) * scale;

    if (spec.position == PositionKind::Sinusoidal) {
      for (int64_t p = 0; p < t; ++p)
        for (int64_t j = 0; j < d; ++j)
          x.at(p, j) += sinusoidal(p, j, d);
    } else if (spec.position == PositionKind::Learned) {
      const float *positions = weight("embed.positions");
      for (int64_t p = 0; p < t; ++p)
        for (int64_t j = 0; j < d; ++j)
          x.at(p, j) += static_cast<double>(positions[p * d + j]);
    }

    // No segment ids are given, so every token is in segment 0.
    if (spec.segments > 0) {
      const float *segments = weight("embed.segments");
      for (int64_t p = 0; p < t; ++p)
        for (int64_t j = 0; j < d; ++j)
          x.at(p, j) += static_cast<double>(segments[j]);
    }

    if (spec.embedNorm)
      x = norm(x, *spec.embedNorm, "embed.norm");
    return x;
  }

  Matrix layer(const Matrix &x, const StackSpec &stack,
               const std::string &prefix) {
    const std::string n1 = prefix + ".norm1", n2 = prefix + ".norm2";
    if (stack.placement == NormPlacement::Post) {
      Matrix h = norm(add(x, attention(x, stack, prefix + ".self_attn")),
                      stack.norm, n1);
      return norm(add(h, ffn(h, stack, prefix + ".ffn")), stack.norm, n2);
    }
    Matrix h =
        add(x, attention(norm(x, stack.norm, n1), stack, prefix + ".self_attn"));
    return add(h, ffn(norm(h, stack.norm, n2), stack, prefix + ".ffn"));
  }

  /// y = x W^T + b with W in nn.Linear layout [out, in].
  Matrix linear(const Matrix &x, const std::string &prefix, int64_t out) {
    const float *w = weight(prefix + ".weight");
    const float *b = spec.encoder.bias ? weight(prefix + ".bias") : nullptr;
    Matrix y(x.rows, out);
    for (int64_t r = 0; r < x.rows; ++r)
      for (int64_t o = 0; o < out; ++o) {
        double sum = b ? static_cast<double>(b[o]) : 0.0;
        for (int64_t i = 0; i < x.cols; ++i)
          sum += x.at(r, i) * static_cast<double>(w[o * x.cols + i]);
        y.at(r, o) = sum;
      }
    return y;
  }

  Matrix norm(const Matrix &x, const NormSpec &normSpec,
             const std::string &prefix) {
    const float *w = weight(prefix + ".weight");
    Matrix y(x.rows, x.cols);
    double n = static_cast<double>(x.cols);
    for (int64_t r = 0; r < x.rows; ++r) {
      if (normSpec.kind == NormKind::LayerNorm) {
        const float *b = weight(prefix + ".bias");
        double mean = 0.0;
        for (int64_t c = 0; c < x.cols; ++c)
          mean += x.at(r, c);
        mean /= n;
        // Biased variance (divide by n), as torch.nn.LayerNorm.
        double var = 0.0;
        for (int64_t c = 0; c < x.cols; ++c)
          var += (x.at(r, c) - mean) * (x.at(r, c) - mean);
        var /= n;
        double inv = 1.0 / std::sqrt(var + normSpec.eps);
        for (int64_t c = 0; c < x.cols; ++c)
          y.at(r, c) = (x.at(r, c) - mean) * inv * static_cast<double>(w[c]) +
                       static_cast<double>(b[c]);
      } else {
        double meanSquare = 0.0;
        for (int64_t c = 0; c < x.cols; ++c)
          meanSquare += x.at(r, c) * x.at(r, c);
        meanSquare /= n;
        double inv = 1.0 / std::sqrt(meanSquare + normSpec.eps);
        for (int64_t c = 0; c < x.cols; ++c)
          y.at(r, c) = x.at(r, c) * inv * static_cast<double>(w[c]);
      }
    }
    return y;
  }

  Matrix attention(const Matrix &x, const StackSpec &stack,
                   const std::string &prefix) {
    int64_t hd = stack.headDim;
    Matrix q = linear(x, prefix + ".q", stack.heads * hd);
    Matrix k = linear(x, prefix + ".k", stack.kvHeads * hd);
    Matrix v = linear(x, prefix + ".v", stack.kvHeads * hd);
    int64_t group = stack.heads / stack.kvHeads;
    double scale = 1.0 / std::sqrt(static_cast<double>(hd));

    Matrix context(x.rows, stack.heads * hd);
    std::vector<double> scores(static_cast<size_t>(x.rows));
    for (int64_t h = 0; h < stack.heads; ++h) {
      int64_t kvh = h / group;
      for (int64_t i = 0; i < x.rows; ++i) {
        // No mask: every query sees every key.
        for (int64_t j = 0; j < x.rows; ++j) {
          double dot = 0.0;
          for (int64_t e = 0; e < hd; ++e)
            dot += q.at(i, h * hd + e) * k.at(j, kvh * hd + e);
          scores[j] = dot * scale;
        }
        double maxScore = *std::max_element(scores.begin(), scores.end());
        double total = 0.0;
        for (double &s : scores) {
          s = std::exp(s - maxScore);
          total += s;
        }
        for (int64_t e = 0; e < hd; ++e) {
          double sum = 0.0;
          for (int64_t j = 0; j < x.rows; ++j)
            sum += scores[j] / total * v.at(j, kvh * hd + e);
          context.at(i, h * hd + e) = sum;
        }
      }
    }
    return linear(context, prefix + ".o", spec.dModel);
  }

  static double activate(Activation act, double x) {
    switch (act) {
    case Activation::Relu:
      return x > 0.0 ? x : 0.0;
    case Activation::Gelu:
    case Activation::GeGLU:
      return gelu(x);
    case Activation::GeluTanh:
      return geluTanh(x);
    case Activation::Silu:
    case Activation::SwiGLU:
      return silu(x);
    }
    return x;
  }

  Matrix ffn(const Matrix &x, const StackSpec &stack,
             const std::string &prefix) {
    bool gated =
        stack.ffn == Activation::SwiGLU || stack.ffn == Activation::GeGLU;
    Matrix up = linear(x, prefix + ".up", stack.dFF);
    if (gated) {
      Matrix gate = linear(x, prefix + ".gate", stack.dFF);
      for (size_t i = 0; i < up.data.size(); ++i)
        up.data[i] *= activate(stack.ffn, gate.data[i]);
    } else {
      for (double &value : up.data)
        value = activate(stack.ffn, value);
    }
    return linear(up, prefix + ".down", spec.dModel);
  }

  const ModelSpec &spec;
  const WeightLookup &weights;
};

} // namespace

std::optional<std::vector<double>> evaluate(const ModelSpec &spec,
                                            const WeightLookup &weights,
                                            const std::vector<int32_t> &tokens,
                                            std::string *error) {
  auto fail = [&](std::string message) {
    if (error)
      *error = std::move(message);
    return std::nullopt;
  };
  if (std::string why = unsupportedFeature(spec); !why.empty())
    return fail("reference: " + why);
  if (tokens.empty())
    return fail("reference: no tokens given");
  if (static_cast<int64_t>(tokens.size()) > spec.maxSeq)
    return fail("reference: " + std::to_string(tokens.size()) +
                " tokens exceed max_seq " + std::to_string(spec.maxSeq));
  for (size_t p = 0; p < tokens.size(); ++p)
    if (tokens[p] < 0 || tokens[p] >= spec.vocab)
      return fail("reference: token " + std::to_string(tokens[p]) +
                  " at position " + std::to_string(p) + " is outside [0, " +
                  std::to_string(spec.vocab) + ")");
  // Checked up front so the evaluator itself never meets a missing tensor.
  for (const TensorSpec &tensor : buildManifest(spec))
    if (!weights(tensor.name))
      return fail("reference: missing weight '" + tensor.name + "'");

  return Evaluator(spec, weights).run(tokens).data;
}

} // namespace tmc::ref
