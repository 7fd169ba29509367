//===- Reference.cpp - A plain evaluator of the spec semantics ------------===//
//
// Written to be read against docs/spec-language.md line by line, not to be
// fast: every intermediate is a [rows, cols] matrix of doubles and every loop
// is the textbook one. When a compiled model and this file disagree, this file
// should be the easy one to trust. Spec and input checks live in
// ReferenceChecks.cpp, attention in ReferenceAttention.cpp.
//
//===----------------------------------------------------------------------===//

#include "reference/Reference.h"

#include "reference/ReferenceInternal.h"

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

int64_t outputRows(const ModelSpec &spec, int64_t tokens) {
  return spec.output == OutputKind::Classifier ? 1 : tokens;
}

namespace {

using detail::Matrix;

/// One sequence as a stack reads it.
struct Sequence {
  const std::vector<int32_t> *tokens = nullptr;
  const std::vector<int32_t> *segments = nullptr; ///< empty: all segment 0
  int64_t length = 0;                             ///< valid length
};

class Evaluator {
public:
  Evaluator(const ModelSpec &spec, detail::WeightTable &weights, const TapObserver &observer)
      : spec(spec), weights(weights), observer(observer) {}

  Matrix run(const Inputs &inputs) {
    static const std::vector<int32_t> noSegments;
    int64_t count = static_cast<int64_t>(inputs.tokens.size());
    Sequence target{&inputs.tokens, &inputs.segments, inputs.length.value_or(count)};
    // Unshared embeddings give the decoder, and so a tied head, its own table.
    std::string table = headTable();
    Matrix h;
    if (spec.isEncoderDecoder()) {
      int64_t sourceCount = static_cast<int64_t>(inputs.sourceTokens.size());
      Sequence source{&inputs.sourceTokens, &inputs.segments,
                      inputs.sourceLength.value_or(sourceCount)};
      target.segments = &noSegments;
      inSource = true;
      Matrix memory = runStack(embed(source, "embed.tokens"), spec.encoder, "encoder",
                               /*decoder=*/false, source.length, nullptr, 0);
      inSource = false;
      h = runStack(embed(target, table), spec.decoder, "decoder", /*decoder=*/true,
                   target.length, &memory, source.length);
    } else if (spec.encoder.present) {
      h = runStack(embed(target, table), spec.encoder, "encoder", false, target.length,
                   nullptr, 0);
    } else {
      h = runStack(embed(target, table), spec.decoder, "decoder", true, target.length,
                   nullptr, 0);
    }
    return head(h, target.length, table);
  }

private:
  /// The table the decoder (or the one stack) looks tokens up in, which a
  /// tied head multiplies: an encoder-decoder with unshared embeddings
  /// gives the decoder its own.
  std::string headTable() const {
    return spec.isEncoderDecoder() && !spec.shareEmbeddings ? "decoder.embed.tokens"
                                                            : "embed.tokens";
  }

  /// Reports `value` as `name` (see Tap) when someone observes; returns it.
  const Matrix &tap(const std::string &name, const Matrix &value, bool source = false) {
    if (observer)
      observer(Tap{name, source || inSource, value.rows, value.cols, &value.data});
    return value;
  }

  Matrix embed(const Sequence &sequence, const std::string &table) {
    const std::vector<int32_t> &tokens = *sequence.tokens;
    int64_t t = static_cast<int64_t>(tokens.size()), d = spec.dModel;
    const float *rows = weights.get(table, spec.vocab * d);
    double scale = spec.embedScale ? std::sqrt(static_cast<double>(d)) : 1.0;
    // A tied head's table is looked up as the head multiplies it
    // (docs/spec-language.md, `precision`): each row dequantized.
    const bool tiedTable = spec.output == OutputKind::LMHead && spec.tiedHead &&
                           spec.precision != Precision::F32 && table == headTable();
    Matrix x(t, d);
    for (int64_t p = 0; p < t; ++p) {
      const float *row = rows + tokens[p] * d;
      std::vector<float> dequantized;
      if (tiedTable) {
        dequantized = detail::dequantizedRow(row, d, spec.precision);
        row = dequantized.data();
      }
      for (int64_t j = 0; j < d; ++j)
        x.at(p, j) = static_cast<double>(row[j]) * scale;
    }

    // Positions count from 0 in every sequence (source and target alike).
    if (spec.position == PositionKind::Sinusoidal) {
      for (int64_t p = 0; p < t; ++p)
        for (int64_t j = 0; j < d; ++j)
          x.at(p, j) += sinusoidal(p, j, d);
    } else if (spec.position == PositionKind::Learned) {
      const float *positions = weights.get("embed.positions", spec.maxSeq * d);
      for (int64_t p = 0; p < t; ++p)
        for (int64_t j = 0; j < d; ++j)
          x.at(p, j) += static_cast<double>(positions[p * d + j]);
    }

    if (spec.segments > 0) {
      const float *segments = weights.get("embed.segments", spec.segments * d);
      const std::vector<int32_t> &ids = *sequence.segments;
      for (int64_t p = 0; p < t; ++p) {
        int64_t id = ids.empty() ? 0 : ids[p];
        for (int64_t j = 0; j < d; ++j)
          x.at(p, j) += static_cast<double>(segments[id * d + j]);
      }
    }

    if (spec.embedNorm)
      x = norm(x, *spec.embedNorm, "embed.norm");
    return tap("embed", x);
  }

  Matrix runStack(Matrix x, const StackSpec &stack, const std::string &name, bool decoder,
                  int64_t length, const Matrix *memory, int64_t memoryLength) {
    for (int64_t i = 0; i < stack.layers; ++i)
      x = layer(x, stack, i, name + ".layers." + std::to_string(i), decoder, length,
                memory, memoryLength);
    if (stack.finalNorm)
      x = tap(name + ".final_norm", norm(x, *stack.finalNorm, name + ".final_norm"));
    return x;
  }

  /// norm1 goes with self-attention; with cross-attention norm2 goes with it
  /// and norm3 with the ffn, else norm2 goes with the ffn.
  Matrix layer(const Matrix &x, const StackSpec &stack, int64_t index,
               const std::string &prefix, bool decoder, int64_t length,
               const Matrix *memory, int64_t memoryLength) {
    const LayerSpec &layerSpec = stack.layer(index);
    detail::AttentionSite self{&layerSpec, decoder, /*cross=*/false, length, prefix, {}};
    detail::AttentionSite cross{&layerSpec, decoder, /*cross=*/true, memoryLength, prefix, {}};
    if (observer)
      self.tap = cross.tap = [&](const std::string &name, bool source, const Matrix &value) {
        tap(name, value, source);
      };
    bool hasCross = stack.crossAttention;
    const std::string n1 = prefix + ".norm1", n2 = prefix + ".norm2";
    const std::string nFFN = hasCross ? prefix + ".norm3" : n2;
    auto selfAttn = [&](const Matrix &in) {
      return detail::attention(weights, spec, self, prefix + ".self_attn", in, in);
    };
    auto crossAttn = [&](const Matrix &in) {
      return detail::attention(weights, spec, cross, prefix + ".cross_attn", in, *memory);
    };

    const NormSpec &normSpec = layerSpec.norm;
    // Taps: each norm's output under its name ("...norm2") and each residual
    // sum under the matching "...residual2".
    auto sum = [&](const std::string &normName, const Matrix &a, const Matrix &b) {
      std::string name = normName;
      name.replace(name.rfind(".norm"), 5, ".residual");
      return tap(name, add(a, b));
    };
    auto normed = [&](const Matrix &in, const std::string &name) {
      return tap(name, norm(in, normSpec, name));
    };
    if (layerSpec.placement == NormPlacement::Post) {
      Matrix h = normed(sum(n1, x, selfAttn(x)), n1);
      if (hasCross)
        h = normed(sum(n2, h, crossAttn(h)), n2);
      return normed(sum(nFFN, h, ffn(h, layerSpec, prefix + ".ffn")), nFFN);
    }
    Matrix h = sum(n1, x, selfAttn(normed(x, n1)));
    if (hasCross)
      h = sum(n2, h, crossAttn(normed(h, n2)));
    return sum(nFFN, h, ffn(normed(h, nFFN), layerSpec, prefix + ".ffn"));
  }

  Matrix norm(const Matrix &x, const NormSpec &normSpec, const std::string &prefix) {
    const float *w = weights.get(prefix + ".weight", x.cols);
    const float *b = normSpec.kind == NormKind::LayerNorm
                         ? weights.get(prefix + ".bias", x.cols)
                         : nullptr;
    Matrix y(x.rows, x.cols);
    double n = static_cast<double>(x.cols);
    for (int64_t r = 0; r < x.rows; ++r) {
      if (normSpec.kind == NormKind::LayerNorm) {
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

  /// act(up(x)), or for gated kinds act(gate(x)) * up(x); then down.
  Matrix ffn(const Matrix &x, const LayerSpec &layer, const std::string &prefix) {
    bool gated = layer.ffn == Activation::SwiGLU || layer.ffn == Activation::GeGLU;
    Matrix up = detail::linear(weights, x, prefix + ".up", layer.dFF, layer.bias, layer.precision);
    if (gated) {
      Matrix gate = detail::linear(weights, x, prefix + ".gate", layer.dFF, layer.bias, layer.precision);
      tap(prefix + ".up", up);
      tap(prefix + ".gate", gate);
      for (size_t i = 0; i < up.data.size(); ++i)
        up.data[i] *= activate(layer.ffn, gate.data[i]);
      tap(prefix + ".act", up);
    } else {
      for (double &value : up.data)
        value = activate(layer.ffn, value);
      tap(prefix + ".up", up);
    }
    return tap(prefix + ".down",
               detail::linear(weights, up, prefix + ".down", spec.dModel, layer.bias,
                              layer.precision));
  }

  /// The output head over the final hidden states `h` [T, d_model].
  Matrix head(const Matrix &h, int64_t length, const std::string &table) {
    switch (spec.output) {
    case OutputKind::Hidden:
      return h;
    case OutputKind::LMHead: {
      // Tied: logits = h . E^T, the token table read as nn.Linear's [out, in].
      int64_t count = spec.vocab * spec.dModel;
      const float *w = weights.get(spec.tiedHead ? table : "output.weight", count);
      const float *b = spec.headBias ? weights.get("output.bias", spec.vocab) : nullptr;
      return tap("output", detail::linear(h, w, b, spec.vocab, spec.precision));
    }
    case OutputKind::Classifier: {
      Matrix pooled(1, h.cols);
      int64_t rows = spec.pool == Pooling::First ? 1 : length;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < h.cols; ++c)
          pooled.at(0, c) += h.at(r, c) / static_cast<double>(rows);
      if (spec.pooler) {
        pooled =
            detail::linear(weights, pooled, "classifier.pooler", spec.dModel, true, spec.precision);
        for (int64_t c = 0; c < pooled.cols; ++c)
          pooled.at(0, c) = std::tanh(pooled.at(0, c));
      }
      return tap("classifier", detail::linear(weights, pooled, "classifier", spec.classes, true,
                                                           spec.precision));
    }
    }
    return h;
  }

  const ModelSpec &spec;
  detail::WeightTable &weights;
  const TapObserver &observer;
  bool inSource = false; ///< evaluating an encoder-decoder's encoder
};

} // namespace

std::optional<std::vector<double>> evaluate(const ModelSpec &spec,
                                            const WeightLookup &weights,
                                            const Inputs &inputs, std::string *error,
                                            const TapObserver &observer) {
  auto fail = [&](std::string message) {
    if (error)
      *error = "reference: " + std::move(message);
    return std::nullopt;
  };
  if (std::string why = detail::checkSpec(spec); !why.empty())
    return fail(why);
  if (std::string why = detail::checkInputs(spec, inputs); !why.empty())
    return fail(why);
  // Checked up front so the evaluator itself never meets a missing tensor.
  detail::WeightTable table;
  if (!table.load(spec, weights, error))
    return std::nullopt;
  std::vector<double> out = Evaluator(spec, table, observer).run(inputs).data;
  if (!table.failure().empty())
    return fail("internal error: " + table.failure());
  return out;
}

} // namespace tmc::ref
