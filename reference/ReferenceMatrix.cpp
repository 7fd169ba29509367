//===- ReferenceMatrix.cpp - Matrices, checked weight reads, linear layers ===//

#include "reference/ReferenceHalf.h"
#include "reference/ReferenceInternal.h"

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

Matrix linear(const Matrix &x, const float *w, const float *b, int64_t out,
              Precision precision) {
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
