//===- AttentionMask.h - Attention masks as Halide expressions --*- C++ -*-===//
//
// The mask rules of docs/spec-language.md (tm::MaskAttr) evaluated from
// positions, never read from a materialized tensor; shared by the one-pass
// and the key-blocked (online softmax) attention lowerings.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"

#include "Halide.h"

#include <utility>

namespace tmc::halide {

/// Key `r` of the random mask term of query position `row` (SplitMix64 of
/// frontend/Masks.h, in Halide's 64-bit integer arithmetic).
Halide::Expr randomKey(const MaskDesc &mask, const Halide::Expr &row, int r);

/// ALiBi's bias of head `h` (of `heads`) for query position `pos` and key
/// `j`: -2^(-8 (h + 1) / heads) times their distance (pos - j in a decoder,
/// |pos - j| in an encoder). The logit is logit + this.
Halide::Expr alibiBias(const MaskDesc &mask, int64_t heads, const Halide::Expr &h,
                       const Halide::Expr &pos, const Halide::Expr &j);

/// Whether query position `pos` may see key `j`; `length` is the sequence's
/// valid length (padding).
Halide::Expr allowed(const MaskDesc &mask, const Halide::Expr &pos, const Halide::Expr &j,
                     const Halide::Expr &length);

/// Whether key `j` lies before the sequence's padding (`length` valid keys);
/// true for a mask without padding.
Halide::Expr beforePadding(const MaskDesc &mask, const Halide::Expr &j, const Halide::Expr &length);

/// Whether position `x` is one of the mask's global tokens (false if none).
Halide::Expr isGlobal(const MaskDesc &mask, const Halide::Expr &x);

/// allowed(), with the terms of one side given as computed by the caller:
/// `keyValid` of key `j` alone (allowed() passes beforePadding(j)), `rowGlobal` = isGlobal(pos),
/// `keyGlobal` = isGlobal(j). A blocked kernel computes the key terms once per block, not per
/// query.
Halide::Expr allowedWith(const MaskDesc &mask, const Halide::Expr &pos, const Halide::Expr &j,
                         const Halide::Expr &keyValid, const Halide::Expr &rowGlobal,
                         const Halide::Expr &keyGlobal);

/// The keys [first, last] that query position `pos` can see at all, of the
/// positions [stored, keys) the keys buffer holds, when the mask makes them
/// one interval (causal, padding, windows); with globals or random keys, the
/// causal/padding interval alone. Both ends are non-decreasing in `pos`, so
/// a tile of queries sees at most [first(first query), last(last query)].
std::pair<Halide::Expr, Halide::Expr> visibleKeys(const MaskDesc &mask, const Halide::Expr &pos,
                                                  const Halide::Expr &length,
                                                  const Halide::Expr &stored,
                                                  const Halide::Expr &keys);

} // namespace tmc::halide
