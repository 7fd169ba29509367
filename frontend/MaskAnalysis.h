//===- MaskAnalysis.h - Counting what an attention mask allows ---*- C++ -*-===//
//
// Questions about a whole mask that frontend/Masks.h (which answers "may query
// i see key j?") would answer too slowly one pair at a time: how many keys a
// query row sees (for `tmc check`'s FLOP counts), whether some row sees none
// at all (an error Sema reports), and the mask written back as spec text.
//
// Every count assumes a full sequence: max_seq positions, none of them
// padding. Unit tests pin each count to a brute-force count over maskAllows.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/ModelSpec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tmc {

/// Counts, row by row, the keys a mask lets a query attend to.
class MaskRows {
public:
  /// `decoder` selects the decoder's window convention (see maskAllows).
  MaskRows(const MaskSpec &mask, bool decoder, int64_t maxSeq);

  /// How many keys query row `i` (0 <= i < maxSeq) may attend to.
  int64_t allowedKeys(int64_t i) const;

  /// The sum of allowedKeys over every row. Exact when that takes at most
  /// about `budget` steps (2^24 by default: every realistic spec); otherwise
  /// it is extrapolated from evenly spaced rows and `exact` is set to false. A row costs O(1)
  /// per window term when there is at most one sliding and one dilated
  /// window (as Sema requires), plus one step per global token and random
  /// key.
  double totalAllowedKeys(bool &exact, int64_t budget = int64_t(1) << 24) const;

  /// The first row that may attend to no key at all, if one exists. Such rows
  /// need causal together with global or random terms only; the search gives
  /// up (returns nullopt) after about 2^20 steps.
  std::optional<int64_t> firstEmptyRow() const;

private:
  int64_t windowKeys(int64_t i, int64_t last) const;
  bool inWindows(int64_t i, int64_t j) const;
  /// Rough cost of one allowedKeys call, for the work budgets.
  int64_t rowCost() const;

  MaskSpec windowMask; ///< the window terms alone
  std::vector<const MaskTerm *> randoms;
  std::vector<int64_t> globals; ///< sorted, without repeats
  bool decoder, causal, restricted;
  int64_t maxSeq;
  /// Keys beyond the windows for the row being counted, kept to save an
  /// allocation per row.
  mutable std::vector<int64_t> scratch;
};

/// The mask as a spec would write it: "padding + sliding_window(size = 128)",
/// or "none".
std::string formatMask(const MaskSpec &mask);

} // namespace tmc
