//===- ReferenceMatrix.cpp - Matrices, checked weight reads, linear layers ===//

#include "reference/ReferenceHalf.h"
#include "reference/ReferenceInternal.h"

#include <algorithm>
#include <cmath>

namespace tmc::ref::detail {

Matrix add(const Matrix &a, const Matrix &b) {
  Matrix out = a;
  for (size_t i = 0; i < out.data.size(); ++i)
    out.data[i] += b.data[i];
  return out;
}

bool WeightTable::load(const ModelSpec &spec, const WeightLookup &lookup,
                       std::string *error) {
  for (const TensorSpec &tensor : requiredTensors(spec)) {
    const float *data = lookup(tensor.name);
    if (!data) {
      if (error)
        *error = "reference: missing weight '" + tensor.name + "'";
      return false;
    }
    int64_t count = 1;
    for (int64_t dim : tensor.shape)
      count *= dim;
    entries[tensor.name] = {data, count};
  }
  return true;
}

const float *WeightTable::get(const std::string &name, int64_t count) {
  auto it = entries.find(name);
  if (it != entries.end() && it->second.count == count)
    return it->second.data;
  if (firstFailure.empty())
    firstFailure = it == entries.end()
                       ? "read '" + name + "', which requiredTensors() does not list"
                       : "read " + std::to_string(count) + " elements of '" + name +
                             "', which holds " + std::to_string(it->second.count);
  // A fresh buffer each time: earlier ones may still be in use by the caller.
  zeroBuffers.emplace_back(static_cast<size_t>(count > 0 ? count : 1), 0.0f);
  return zeroBuffers.back().data();
}

namespace {

/// A row of values quantized symmetrically to [-127, 127], in f32 as the
/// contract (docs/spec-language.md, precision = int8) writes it: the scale is
/// max|v| / 127, each value round-half-even(v * (127 / max|v|)).
struct QuantizedRow {
  std::vector<int32_t> values;
  float scale = 0;
};

QuantizedRow quantizeRow(const float *row, int64_t count) {
  float absMax = 0;
  for (int64_t i = 0; i < count; ++i)
    absMax = std::max(absMax, std::fabs(row[i]));
  const float inverse = absMax > 0 ? 127.0f / absMax : 0.0f;
  QuantizedRow out;
  out.scale = absMax / 127.0f;
  out.values.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const float scaled = row[i] * inverse; // an f32 product, as tmc's
    out.values[static_cast<size_t>(i)] =
        static_cast<int32_t>(std::clamp(std::nearbyint(scaled), -127.0f, 127.0f));
  }
  return out;
}

/// The quantized GEMMs' frame: each row of x narrowed to the f32 values
/// tmc's kernels hold and quantized as int8's activations are; `dot(tokens,
/// o)` is output o's sum in units of the row's scale, before the bias.
template <typename Dot>
Matrix quantizedLinear(const Matrix &x, const float *b, int64_t out, Dot dot) {
  Matrix y(x.rows, out);
  std::vector<float> row(static_cast<size_t>(x.cols));
  for (int64_t r = 0; r < x.rows; ++r) {
    for (int64_t i = 0; i < x.cols; ++i)
      row[static_cast<size_t>(i)] = static_cast<float>(x.at(r, i));
    const QuantizedRow tokens = quantizeRow(row.data(), x.cols);
    for (int64_t o = 0; o < out; ++o)
      y.at(r, o) = dot(tokens, o) * tokens.scale + (b ? static_cast<double>(b[o]) : 0.0);
  }
  return y;
}

/// The int8 GEMM. The u8 zero point of the kernel cancels exactly and does
/// not appear here.
Matrix linearInt8(const Matrix &x, const float *w, const float *b, int64_t out) {
  std::vector<QuantizedRow> weightRows;
  for (int64_t o = 0; o < out; ++o)
    weightRows.push_back(quantizeRow(w + o * x.cols, x.cols));
  return quantizedLinear(x, b, out, [&](const QuantizedRow &tokens, int64_t o) {
    const QuantizedRow &weights = weightRows[static_cast<size_t>(o)];
    int64_t sum = 0;
    for (size_t i = 0; i < weights.values.size(); ++i)
      sum += int64_t(tokens.values[i]) * weights.values[i];
    return static_cast<double>(sum) * weights.scale;
  });
}

/// One output channel's weights in ggml's Q4_0 blocks, as the contract
/// (docs/spec-language.md, precision = q4) writes it: each block of 32
/// along K holds q - 8 in [-8, 7] and its scale rounded to f16.
struct Q4Row {
  std::vector<int32_t> values; ///< q_k - 8, K of them (the padding is 0)
  std::vector<double> scales;  ///< float(ds) of each block, ceil(K/32) of them
};

constexpr int64_t kQ4Block = 32;

/// The f32 arithmetic of ggml's quantize_row_q4_0_ref. The product and the
/// sum of w * id + 8.5 are each formed in double and rounded to f32 at once,
/// which gives the f32 result (double holds the product of two floats
/// exactly, and their sum closely enough that rounding it to f32 is the f32
/// sum), so that no compiler can fuse them into one FMA, which would round
/// once instead of twice.
Q4Row quantizeQ4Row(const float *row, int64_t count) {
  Q4Row out;
  out.values.resize(static_cast<size_t>(count));
  for (int64_t begin = 0; begin < count; begin += kQ4Block) {
    const int64_t end = std::min(begin + kQ4Block, count);
    // The value of the largest magnitude, the first of a tie in k order.
    float absMax = 0, extreme = 0;
    for (int64_t k = begin; k < end; ++k)
      if (std::fabs(row[k]) > absMax) {
        absMax = std::fabs(row[k]);
        extreme = row[k];
      }
    const float d = extreme / -8.0f;
    const float inverse = d != 0 ? 1.0f / d : 0.0f;
    for (int64_t k = begin; k < end; ++k) {
      const float scaled = static_cast<float>(double(row[k]) * double(inverse));
      const float shifted = static_cast<float>(double(scaled) + 8.5);
      // ggml's (int8_t) cast truncates toward zero; shifted is >= 0 here.
      const int32_t q = std::min(15, static_cast<int32_t>(std::trunc(shifted)));
      out.values[static_cast<size_t>(k)] = q - 8;
    }
    out.scales.push_back(roundToBinary16(d));
  }
  return out;
}

/// The q4 GEMM: the activations are quantized per row as int8's are (the
/// same symmetric values; the kernel has no zero point to correct), each
/// block's integer sum is exact and scaled by the block's f16 scale, and
/// the blocks' sums are summed in double (the kernel sums them in f32).
Matrix linearQ4(const Matrix &x, const float *w, const float *b, int64_t out) {
  std::vector<Q4Row> weightRows;
  for (int64_t o = 0; o < out; ++o)
    weightRows.push_back(quantizeQ4Row(w + o * x.cols, x.cols));
  return quantizedLinear(x, b, out, [&](const QuantizedRow &tokens, int64_t o) {
    const Q4Row &weights = weightRows[static_cast<size_t>(o)];
    double sum = 0;
    for (int64_t begin = 0; begin < x.cols; begin += kQ4Block) {
      int32_t blockSum = 0; // |blockSum| <= 32 * 8 * 127
      for (int64_t k = begin; k < std::min(begin + kQ4Block, x.cols); ++k)
        blockSum += tokens.values[static_cast<size_t>(k)] * weights.values[static_cast<size_t>(k)];
      sum += blockSum * weights.scales[static_cast<size_t>(begin / kQ4Block)];
    }
    return sum;
  });
}

} // namespace

std::vector<float> dequantizedRow(const float *row, int64_t count, Precision precision) {
  std::vector<float> out(row, row + count);
  if (precision == Precision::BF16) {
    for (float &value : out)
      value = static_cast<float>(roundToBfloat16(value));
  } else if (precision == Precision::Int8) {
    const QuantizedRow q = quantizeRow(row, count);
    for (int64_t i = 0; i < count; ++i)
      out[static_cast<size_t>(i)] = static_cast<float>(q.values[static_cast<size_t>(i)]) * q.scale;
  } else if (precision == Precision::Q4) {
    const Q4Row q = quantizeQ4Row(row, count);
    for (int64_t i = 0; i < count; ++i) // exact: 4 bits times an f16 value
      out[static_cast<size_t>(i)] = static_cast<float>(q.values[static_cast<size_t>(i)] *
                                                       q.scales[static_cast<size_t>(i / kQ4Block)]);
  }
  return out;
}

Matrix linear(const Matrix &x, const float *w, const float *b, int64_t out,
              Precision precision) {
  if (precision == Precision::Int8)
    return linearInt8(x, w, b, out);
  if (precision == Precision::Q4)
    return linearQ4(x, w, b, out);
  if (precision == Precision::BF16) {
    // The inputs rounded once; the sum below is the f32 path's.
    Matrix xr = x;
    for (double &value : xr.data)
      value = roundToBfloat16(value);
    std::vector<float> wr(w, w + out * x.cols);
    for (float &value : wr)
      value = static_cast<float>(roundToBfloat16(value)); // exact: bf16 fits in f32
    return linear(xr, wr.data(), b, out);
  }
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

Matrix linear(WeightTable &weights, const Matrix &x, const std::string &prefix,
              int64_t out, bool bias, Precision precision) {
  const float *w = weights.get(prefix + ".weight", out * x.cols);
  const float *b = bias ? weights.get(prefix + ".bias", out) : nullptr;
  return linear(x, w, b, out, precision);
}

} // namespace tmc::ref::detail
