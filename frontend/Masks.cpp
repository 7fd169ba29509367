//===- Masks.cpp - What an attention mask allows --------------------------===//

#include "frontend/Masks.h"

#include <algorithm>

namespace tmc {

std::vector<int64_t> randomMaskKeys(const MaskTerm &term, int64_t maxSeq, int64_t row) {
  std::vector<int64_t> keys;
  keys.reserve(static_cast<size_t>(term.perRow));
  for (int64_t r = 0; r < term.perRow; ++r) {
    uint64_t z = term.seed + static_cast<uint64_t>(row * term.perRow + r + 1) *
                                 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    keys.push_back(static_cast<int64_t>(z % static_cast<uint64_t>(maxSeq)));
  }
  return keys;
}

namespace {

bool termAllows(const MaskTerm &term, bool decoder, int64_t maxSeq, int64_t i, int64_t j) {
  switch (term.kind) {
  case MaskKind::SlidingWindow:
  case MaskKind::DilatedWindow: {
    bool inWindow = decoder ? (i - term.size < j && j <= i)
                            : (std::abs(i - j) <= term.size / 2);
    if (term.kind == MaskKind::SlidingWindow)
      return inWindow;
    return inWindow && (i - j) % term.dilation == 0;
  }
  case MaskKind::Global:
    return std::find(term.tokens.begin(), term.tokens.end(), i) != term.tokens.end() ||
           std::find(term.tokens.begin(), term.tokens.end(), j) != term.tokens.end();
  case MaskKind::Random: {
    std::vector<int64_t> keys = randomMaskKeys(term, maxSeq, i);
    return std::find(keys.begin(), keys.end(), j) != keys.end();
  }
  case MaskKind::Causal:
  case MaskKind::Padding:
    break;
  }
  return false;
}

} // namespace

bool maskAllows(const MaskSpec &mask, bool decoder, int64_t maxSeq, int64_t i, int64_t j,
                int64_t length) {
  if (mask.has(MaskKind::Causal) && j > i)
    return false;
  if (mask.has(MaskKind::Padding) && j >= length)
    return false;
  bool restricted = false, allowed = false;
  for (const MaskTerm &term : mask.terms) {
    if (term.kind == MaskKind::Causal || term.kind == MaskKind::Padding)
      continue;
    restricted = true;
    allowed = allowed || termAllows(term, decoder, maxSeq, i, j);
  }
  return !restricted || allowed;
}

} // namespace tmc
