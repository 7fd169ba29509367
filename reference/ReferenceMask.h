//===- ReferenceMask.h - Which keys a query sees, read apart -----*- C++ -*-===//
//
// The reference's own reading of the mask rules of docs/spec-language.md
// ("Masks"), written from that page and not from the product's
// frontend/Masks.h, so that a wrong rule in the compiler shows up as a
// mismatch against the oracle instead of being shared by both. The input is
// the checked ModelSpec: per-layer overrides are already resolved into
// StackSpec::layerSpecs by the frontend, the one part of masks the reference
// takes from it (the reference never reads the syntax tree).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/ModelSpec.h"

#include <cstdint>
#include <vector>

namespace tmc::ref {

/// The keys `random(per_row = R, seed = S)` draws for query row `row`, in
/// draw order (repeats kept), each in [0, maxSeq): the documented SplitMix64
/// draw z = S + (row * R + r + 1) * 0x9E3779B97F4A7C15 (mod 2^64), then the
/// two xor-shift-multiply rounds and a final xor-shift, key = z mod maxSeq.
std::vector<int64_t> randomMaskDraws(int64_t perRow, uint64_t seed, int64_t maxSeq,
                                     int64_t row);

/// Whether query `query` may see key `key` under `mask` in a stack of kind
/// `decoder` (the decoder's windows look back only), for a sequence of which
/// the first `length` keys are valid (what a `padding` term hides past).
bool queryMaySeeKey(const MaskSpec &mask, bool decoder, int64_t maxSeq, int64_t query,
                    int64_t key, int64_t length);

} // namespace tmc::ref
