//===- Masks.h - What an attention mask allows -----------------*- C++ -*-===//
//
// The one definition of mask semantics (docs/spec-language.md, "Masks"),
// shared by the reference evaluator and the compiler's mask analysis, and the
// generator behind `random(per_row = R, seed = S)`, which both must agree on
// bit for bit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/ModelSpec.h"

#include <cstdint>
#include <vector>

namespace tmc {

/// The R keys `random(per_row = R, seed = S)` adds for query row `i`, each in
/// [0, maxSeq) (keys at or past the sequence's length are then simply absent):
///   z = S + (i * R + r + 1) * 0x9E3779B97F4A7C15            (mod 2^64)
///   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) * 0x94D049BB133111EB
///   key_r = (z ^ (z >> 31)) mod maxSeq,   r = 0 .. R-1   (SplitMix64)
/// Keys depend on the row and max_seq only, never on the sequence length, so
/// prefill and token-by-token decoding see the same pattern.
std::vector<int64_t> randomMaskKeys(const MaskTerm &term, int64_t maxSeq, int64_t row);

/// Whether query `i` may attend to key `j` when the sequence has `length`
/// valid keys. `decoder` selects the decoder's window convention
/// (i - W < j <= i) over the encoder's (|i - j| <= W / 2).
bool maskAllows(const MaskSpec &mask, bool decoder, int64_t maxSeq, int64_t i, int64_t j,
                int64_t length);

} // namespace tmc
