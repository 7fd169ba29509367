//===- ReferenceMask.cpp - Which keys a query sees, read apart ------------===//
//
// docs/spec-language.md, "Masks": terms joined with `+` allow the union of
// what they allow, except `causal` (no key after the query) and `padding` (no
// key at or past the valid length), which always restrict. A mask with no
// window, `global` or `random` term (`none`, `causal`, `padding`) leaves
// every other key allowed; any such term limits keys to their union.
//
//===----------------------------------------------------------------------===//

#include "reference/ReferenceMask.h"

#include <algorithm>
#include <cstdlib>

namespace tmc::ref {

namespace {

bool contains(const std::vector<int64_t> &positions, int64_t position) {
  return std::find(positions.begin(), positions.end(), position) != positions.end();
}

/// `sliding_window(size = W)`: |i - j| <= W/2 in an encoder, i - W < j <= i
/// in a decoder. The encoder's W/2 is compared as 2|i - j| <= W, so an odd W
/// needs no rounding rule (|i - j| is whole: both readings of W/2 agree).
bool inWindow(int64_t size, bool decoder, int64_t query, int64_t key) {
  if (decoder)
    return query - size < key && key <= query;
  return 2 * std::llabs(query - key) <= size;
}

/// Whether one union term (a window, `global` or `random`) allows the pair.
bool unionTermAllows(const MaskTerm &term, bool decoder, int64_t maxSeq, int64_t query,
                     int64_t key) {
  switch (term.kind) {
  case MaskKind::SlidingWindow:
    return inWindow(term.size, decoder, query, key);
  case MaskKind::DilatedWindow:
    // "(i - j) % D == 0": divisibility, so the sign of i - j does not matter.
    return inWindow(term.size, decoder, query, key) &&
           std::llabs(query - key) % term.dilation == 0;
  case MaskKind::Global:
    // The listed positions see every key and are seen by every query.
    return contains(term.tokens, query) || contains(term.tokens, key);
  case MaskKind::Random:
    // "Repeats count once": membership, however often a key was drawn. "Keys
    // at or past the sequence's length are absent": the evaluator only has
    // keys for the rows present; under a `padding` term the valid length then
    // hides the rest. The doc could also be read as the valid length hiding
    // drawn keys without `padding`; the product (frontend/Masks.cpp) does not
    // read it so, and neither does this (see the `padding` case below).
    return contains(randomMaskDraws(term.perRow, term.seed, maxSeq, query), key);
  case MaskKind::Causal:
  case MaskKind::Padding:
    break;
  }
  return false;
}

} // namespace

std::vector<int64_t> randomMaskDraws(int64_t perRow, uint64_t seed, int64_t maxSeq,
                                     int64_t row) {
  constexpr uint64_t golden = 0x9E3779B97F4A7C15ull;
  std::vector<int64_t> keys;
  for (int64_t r = 0; r < perRow; ++r) {
    // Unsigned arithmetic wraps, which is the documented "mod 2^64".
    const uint64_t n = static_cast<uint64_t>(row) * static_cast<uint64_t>(perRow) +
                       static_cast<uint64_t>(r) + 1;
    uint64_t z = seed + n * golden;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z = z ^ (z >> 31);
    keys.push_back(static_cast<int64_t>(z % static_cast<uint64_t>(maxSeq)));
  }
  return keys;
}

bool queryMaySeeKey(const MaskSpec &mask, bool decoder, int64_t maxSeq, int64_t query,
                    int64_t key, int64_t length) {
  bool hasUnionTerm = false;
  bool inUnion = false;
  for (const MaskTerm &term : mask.terms) {
    switch (term.kind) {
    case MaskKind::Causal:
      if (key > query)
        return false;
      break;
    case MaskKind::Padding:
      // The valid length, not the rows present: a length given without a
      // `padding` term hides nothing (the doc ties hiding to this term alone;
      // the product reads it the same way).
      if (key >= length)
        return false;
      break;
    case MaskKind::SlidingWindow:
    case MaskKind::DilatedWindow:
    case MaskKind::Global:
    case MaskKind::Random:
      hasUnionTerm = true;
      inUnion = inUnion || unionTermAllows(term, decoder, maxSeq, query, key);
      break;
    }
  }
  return !hasUnionTerm || inUnion;
}

} // namespace tmc::ref
