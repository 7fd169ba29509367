//===- ReferenceAttention.cpp - Attention as the contract states it -------===//
//
// scores = q.k / sqrt(head_dim) (+ ALiBi bias), masked keys dropped, softmax
// over the rest, weights.v, heads concatenated, then the o projection. Masks
// are decided by the reference's own reading of the contract (ReferenceMask.h),
// not the compiler's frontend/Masks.h, so a wrong rule in either shows up as a
// mismatch. Positional schemes act on self-attention only: across
// two sequences (cross-attention) a distance between positions means nothing.
//
//===----------------------------------------------------------------------===//

#include "reference/ReferenceHalf.h"
#include "reference/ReferenceInternal.h"

#include "reference/ReferenceMask.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tmc::ref {

double alibiSlope(int64_t head, int64_t heads) {
  return std::pow(2.0, -8.0 * static_cast<double>(head + 1) / static_cast<double>(heads));
}

namespace detail {

namespace {

/// Rotary embedding, rotate-half form (Hugging Face Llama): in each head,
/// dimension i pairs with i + head_dim/2 and turns by
/// position * theta^(-2i/head_dim). The position is the row.
void applyRope(Matrix &x, int64_t heads, int64_t headDim, double theta) {
  int64_t half = headDim / 2;
  for (int64_t p = 0; p < x.rows; ++p)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < half; ++i) {
        double angle = static_cast<double>(p) *
                       std::pow(theta, -2.0 * static_cast<double>(i) /
                                           static_cast<double>(headDim));
        double c = std::cos(angle), s = std::sin(angle);
        double &a = x.at(p, h * headDim + i);
        double &b = x.at(p, h * headDim + i + half);
        double first = a, second = b;
        a = first * c - second * s;
        b = second * c + first * s;
      }
}

/// Linformer: E . x with E the first `columns` columns of the [k, max_seq]
/// matrix at `name` (row-major, so E[r][t] = data[r * max_seq + t]). Only
/// rows before `columns` exist (the sequence, or its valid part under
/// padding), so a shorter sequence simply meets fewer columns of E.
Matrix projectSequence(WeightTable &weights, const std::string &name, const Matrix &x,
                       int64_t k, int64_t maxSeq, int64_t columns) {
  const float *e = weights.get(name, k * maxSeq);
  Matrix y(k, x.cols);
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < x.cols; ++c) {
      double sum = 0.0;
      for (int64_t t = 0; t < columns; ++t)
        sum += static_cast<double>(e[r * maxSeq + t]) * x.at(t, c);
      y.at(r, c) = sum;
    }
  return y;
}

} // namespace

Matrix attention(WeightTable &weights, const ModelSpec &spec, const AttentionSite &site,
                 const std::string &prefix, const Matrix &queries, const Matrix &keys) {
  const LayerSpec &layer = *site.layer;
  int64_t hd = layer.headDim;
  Matrix q = linear(weights, queries, prefix + ".q", layer.heads * hd, layer.bias, layer.precision);
  Matrix k = linear(weights, keys, prefix + ".k", layer.kvHeads * hd, layer.bias, layer.precision);
  Matrix v = linear(weights, keys, prefix + ".v", layer.kvHeads * hd, layer.bias, layer.precision);

  bool positional = !site.cross;
  if (positional && spec.position == PositionKind::Rope) {
    applyRope(q, layer.heads, hd, spec.ropeTheta);
    applyRope(k, layer.kvHeads, hd, spec.ropeTheta);
  }
  bool alibi = positional && spec.position == PositionKind::Alibi;
  if (site.tap) {
    site.tap(prefix + ".q", false, q);
    site.tap(prefix + ".k", site.cross, k);
    site.tap(prefix + ".v", site.cross, v);
  }

  // A decoder reads its keys and values from caches that store them as
  // kv_cache says (rounded to nearest even as they are appended): every
  // read, the prompt's own included, sees the stored values.
  if ((site.decoder || site.cross) && layer.kvCache != CachePrecision::F32) {
    auto stored = layer.kvCache == CachePrecision::F16 ? roundToBinary16 : roundToBfloat16;
    for (Matrix *m : {&k, &v})
      for (int64_t r = 0; r < m->rows; ++r)
        for (int64_t c = 0; c < m->cols; ++c)
          m->at(r, c) = stored(m->at(r, c));
  }

  // Linformer replaces the keys and values by k projected rows; masks and
  // positions no longer name keys then, which evaluate() checked.
  bool linformer = !site.cross && layer.attention == AttentionKind::Linformer;
  if (linformer) {
    int64_t columns = layer.mask.has(MaskKind::Padding) ? site.keyLength : k.rows;
    k = projectSequence(weights, site.layerPrefix + ".attn_proj.k.weight", k,
                        layer.linformerK, spec.maxSeq, columns);
    v = projectSequence(weights, site.layerPrefix + ".attn_proj.v.weight", v,
                        layer.linformerK, spec.maxSeq, columns);
  }

  auto allowed = [&](int64_t i, int64_t j) {
    if (linformer)
      return true;
    if (site.cross)
      return j < site.keyLength;
    return queryMaySeeKey(layer.mask, site.decoder, spec.maxSeq, i, j, site.keyLength);
  };

  int64_t group = layer.heads / layer.kvHeads;
  double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  const double hidden = -std::numeric_limits<double>::infinity();
  Matrix context(q.rows, layer.heads * hd);
  std::vector<double> scores(static_cast<size_t>(k.rows));
  for (int64_t h = 0; h < layer.heads; ++h) {
    int64_t kvh = h / group;
    double slope = alibi ? alibiSlope(h, layer.heads) : 0.0;
    for (int64_t i = 0; i < q.rows; ++i) {
      double maxScore = hidden;
      for (int64_t j = 0; j < k.rows; ++j) {
        if (!allowed(i, j)) {
          scores[j] = hidden;
          continue;
        }
        double dot = 0.0;
        for (int64_t e = 0; e < hd; ++e)
          dot += q.at(i, h * hd + e) * k.at(j, kvh * hd + e);
        double distance = site.decoder ? static_cast<double>(i - j)
                                       : std::abs(static_cast<double>(i - j));
        scores[j] = dot * scale - slope * distance;
        maxScore = std::max(maxScore, scores[j]);
      }
      // A query that may see no key reads nothing: its context stays zero.
      if (maxScore == hidden)
        continue;
      double total = 0.0;
      for (double &s : scores) {
        s = s == hidden ? 0.0 : std::exp(s - maxScore);
        total += s;
      }
      for (int64_t e = 0; e < hd; ++e) {
        double sum = 0.0;
        for (int64_t j = 0; j < k.rows; ++j)
          sum += scores[j] / total * v.at(j, kvh * hd + e);
        context.at(i, h * hd + e) = sum;
      }
    }
  }
  Matrix out = linear(weights, context, prefix + ".o", spec.dModel, layer.bias, layer.precision);
  if (site.tap) {
    site.tap(prefix + ".attn", false, context);
    site.tap(prefix + ".o", false, out);
  }
  return out;
}

} // namespace detail
} // namespace tmc::ref
