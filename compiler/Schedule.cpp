//===- Schedule.cpp - Default schedules -----------------------------------===//

#include "compiler/Schedule.h"

#include "compiler/KernelPlan.h"
#include "compiler/Target.h"

#include <algorithm>
#include <sstream>

namespace tmc {

std::string Schedule::str() const {
  std::ostringstream os;
  os << "vector_width=" << vectorWidth << " tile_cols=" << tileCols
     << " tile_rows=" << tileRows << " query_tile=" << queryTile
     << " parallel=" << (parallel ? 1 : 0);
  return os.str();
}

Schedule defaultSchedule(const KernelDesc &kernel, const TargetInfo &target) {
  Schedule s;
  s.vectorWidth = target.vectorWidth;
  // Four vectors by four rows of accumulators: 16 registers of the 32 (AVX-512)
  // or all 16 (AVX2 uses 2 rows), leaving room for the broadcast operands.
  s.tileCols = 4 * s.vectorWidth;
  s.tileRows = target.vectorWidth >= 16 ? 4 : 2;
  if (kernel.kind == KernelKind::Linear) {
    // Narrow layers: a tile wider than the layer only computes padding.
    int64_t roundedWidth = (kernel.width + s.vectorWidth - 1) / s.vectorWidth * s.vectorWidth;
    s.tileCols = static_cast<int>(std::min<int64_t>(s.tileCols, roundedWidth));
  }
  s.queryTile = 16;
  s.parallel = true;
  return s;
}

} // namespace tmc
