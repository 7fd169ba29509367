//===- MaskAnalysis.cpp - Counting what an attention mask allows ----------===//

#include "frontend/MaskAnalysis.h"

#include "frontend/Masks.h" // randomMaskKeys

#include <algorithm>
#include <cmath>

namespace tmc {

namespace {

bool isWindow(MaskKind kind) {
  return kind == MaskKind::SlidingWindow || kind == MaskKind::DilatedWindow;
}

/// The keys j a window term could allow for query i, before clipping to the
/// sequence: |i - j| <= W / 2 in an encoder, i - W < j <= i in a decoder.
std::pair<int64_t, int64_t> windowSpan(const MaskTerm &term, bool decoder, int64_t i) {
  if (decoder)
    return {i - term.size + 1, i};
  return {i - term.size / 2, i + term.size / 2};
}

constexpr int64_t kEmptyRowBudget = int64_t(1) << 20;

} // namespace

MaskRows::MaskRows(const MaskSpec &mask, bool decoder, int64_t maxSeq)
    : decoder(decoder), causal(mask.has(MaskKind::Causal)), restricted(false),
      maxSeq(maxSeq) {
  for (const MaskTerm &term : mask.terms) {
    if (isWindow(term.kind))
      windowMask.terms.push_back(term);
    else if (term.kind == MaskKind::Random)
      randoms.push_back(&term);
    else if (term.kind == MaskKind::Global)
      globals.insert(globals.end(), term.tokens.begin(), term.tokens.end());
    else
      continue;
    restricted = true;
  }
  std::sort(globals.begin(), globals.end());
  globals.erase(std::unique(globals.begin(), globals.end()), globals.end());
}

bool MaskRows::inWindows(int64_t i, int64_t j) const {
  // The union of the window terms alone, as maskAllows defines each one.
  for (const MaskTerm &term : windowMask.terms) {
    auto [lo, hi] = windowSpan(term, decoder, i);
    if (j >= lo && j <= hi &&
        (term.kind == MaskKind::SlidingWindow || (i - j) % term.dilation == 0))
      return true;
  }
  return false;
}

/// Keys of one window term for query i among keys 0..last. Every window holds
/// the query itself, so the clipped span is [lo, hi] with lo <= i <= hi; a
/// dilated one keeps the keys i - k * D in it.
static int64_t termKeys(const MaskTerm &term, bool decoder, int64_t i, int64_t last) {
  auto [lo, hi] = windowSpan(term, decoder, i);
  lo = std::max<int64_t>(lo, 0);
  hi = std::min(hi, last);
  int64_t d = term.kind == MaskKind::DilatedWindow ? term.dilation : 1;
  return (i - lo) / d + (hi - i) / d + 1;
}

int64_t MaskRows::windowKeys(int64_t i, int64_t last) const {
  const std::vector<MaskTerm> &terms = windowMask.terms;
  if (terms.empty())
    return 0;
  if (terms.size() == 1)
    return termKeys(terms[0], decoder, i, last);
  // One sliding and one dilated window (all Sema allows): their union is both
  // counts less the dilated keys inside the sliding span.
  if (terms.size() == 2 && terms[0].kind != terms[1].kind) {
    const MaskTerm &sliding = terms[0].kind == MaskKind::SlidingWindow ? terms[0] : terms[1];
    const MaskTerm &dilated = terms[0].kind == MaskKind::SlidingWindow ? terms[1] : terms[0];
    auto slidingSpan = windowSpan(sliding, decoder, i);
    auto dilatedSpan = windowSpan(dilated, decoder, i);
    // Both spans hold i, so their intersection [lo, hi] does too.
    int64_t lo = std::max(slidingSpan.first, dilatedSpan.first);
    int64_t hi = std::min(slidingSpan.second, dilatedSpan.second);
    int64_t overlap = (i - std::max<int64_t>(lo, 0)) / dilated.dilation +
                      (std::min(hi, last) - i) / dilated.dilation + 1;
    return termKeys(sliding, decoder, i, last) + termKeys(dilated, decoder, i, last) - overlap;
  }
  int64_t lo = i, hi = i;
  for (const MaskTerm &term : terms) {
    auto span = windowSpan(term, decoder, i);
    lo = std::min(lo, span.first);
    hi = std::max(hi, span.second);
  }
  int64_t count = 0;
  for (int64_t j = std::max<int64_t>(lo, 0), end = std::min(hi, last); j <= end; ++j)
    count += inWindows(i, j);
  return count;
}

int64_t MaskRows::allowedKeys(int64_t i) const {
  int64_t last = causal ? i : maxSeq - 1; // keys 0..last pass causal
  if (!restricted || std::binary_search(globals.begin(), globals.end(), i))
    return last + 1; // a global row sees every key
  int64_t count = windowKeys(i, last);
  std::vector<int64_t> &extra = scratch;
  extra.clear();
  for (int64_t token : globals) {
    if (token > last)
      break;
    extra.push_back(token);
  }
  for (const MaskTerm *term : randoms)
    for (int64_t key : randomMaskKeys(*term, maxSeq, i))
      if (key <= last)
        extra.push_back(key);
  std::sort(extra.begin(), extra.end());
  extra.erase(std::unique(extra.begin(), extra.end()), extra.end());
  for (int64_t key : extra)
    count += !inWindows(i, key);
  return count;
}

int64_t MaskRows::rowCost() const {
  int64_t cost = 1 + static_cast<int64_t>(globals.size());
  for (const MaskTerm *term : randoms)
    cost += term->perRow;
  bool closedForm = windowMask.terms.size() < 2 ||
                    (windowMask.terms.size() == 2 &&
                     windowMask.terms[0].kind != windowMask.terms[1].kind);
  if (!closedForm)
    for (const MaskTerm &term : windowMask.terms)
      cost += term.size;
  return cost;
}

double MaskRows::totalAllowedKeys(bool &exact, int64_t budget) const {
  exact = true;
  double n = static_cast<double>(maxSeq);
  if (!restricted)
    return causal ? n * (n + 1) / 2 : n * n;
  int64_t cost = rowCost();
  int64_t stride = 1;
  if (cost > budget / maxSeq) {
    stride = (maxSeq / (budget / cost + 1)) + 1;
    exact = false;
  }
  double total = 0;
  for (int64_t i = 0; i < maxSeq; i += stride) {
    // A sampled row stands for itself and the stride - 1 rows after it.
    int64_t rows = std::min(stride, maxSeq - i);
    total += static_cast<double>(allowedKeys(i)) * static_cast<double>(rows);
  }
  return total;
}

std::optional<int64_t> MaskRows::firstEmptyRow() const {
  // Without causal, a row sees its whole window, every global token or its
  // random keys (there is at least one of each); every window holds the
  // query itself.
  if (!causal || !restricted || !windowMask.terms.empty())
    return std::nullopt;
  // Rows from the first global token on see that token.
  int64_t end = globals.empty() ? maxSeq : std::min(maxSeq, globals.front());
  int64_t cost = rowCost(), spent = 0;
  for (int64_t i = 0; i < end && spent <= kEmptyRowBudget; ++i, spent += cost)
    if (allowedKeys(i) == 0)
      return i;
  return std::nullopt;
}

std::string formatMask(const MaskSpec &mask) {
  if (mask.none())
    return "none";
  std::string text;
  for (const MaskTerm &term : mask.terms) {
    if (!text.empty())
      text += " + ";
    text += toString(term.kind);
    switch (term.kind) {
    case MaskKind::Causal:
    case MaskKind::Padding:
      break;
    case MaskKind::SlidingWindow:
      text += "(size = " + std::to_string(term.size) + ")";
      break;
    case MaskKind::DilatedWindow:
      text += "(size = " + std::to_string(term.size) +
              ", dilation = " + std::to_string(term.dilation) + ")";
      break;
    case MaskKind::Global: {
      text += "(tokens = [";
      for (size_t k = 0; k < term.tokens.size(); ++k)
        text += (k ? ", " : "") + std::to_string(term.tokens[k]);
      text += "])";
      break;
    }
    case MaskKind::Random:
      text += "(per_row = " + std::to_string(term.perRow) +
              ", seed = " + std::to_string(term.seed) + ")";
      break;
    }
  }
  return text;
}

} // namespace tmc
