//===- Schedule.cpp - Default schedules and the GEMM layout ---------------===//

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
     << " parallel=" << (parallel ? 1 : 0) << " k_block=" << kBlock << " unroll_k=" << unrollK
     << " parallel_rows=" << (parallelRows ? 1 : 0) << " decode_variant=" << (decodeVariant ? 1 : 0)
     << " tokens_estimate=" << tokensEstimate;
  return os.str();
}

Schedule defaultSchedule(const KernelDesc &kernel, const TargetInfo &target) {
  Schedule s;
  s.vectorWidth = target.vectorWidth;
  if (target.vectorWidth >= 16) {
    // AVX-512: 4 vectors x 6 rows = 24 of the 32 zmm registers accumulate,
    // 4 hold the weight row and 1 the broadcast token value (PERFORMANCE.md:
    // a wider or taller tile spills or runs out of row pointers).
    s.tileCols = 4 * s.vectorWidth;
    s.tileRows = 6;
  } else {
    // AVX2: 2 vectors x 6 rows = 12 of the 16 ymm registers (BLIS's 6x16).
    s.tileCols = 2 * s.vectorWidth;
    s.tileRows = 6;
  }
  if (kernel.kind == KernelKind::Linear) {
    // Narrow layers: a tile wider than the layer only computes padding.
    int64_t roundedWidth = (kernel.width + s.vectorWidth - 1) / s.vectorWidth * s.vectorWidth;
    s.tileCols = static_cast<int>(std::min<int64_t>(s.tileCols, roundedWidth));
    // Past ~1024 steps the token rows of a tile and a weight panel no longer
    // sit together in L2 (2 MiB); blocks of 256 keep a panel's block in L1/L2
    // while every row tile passes over it.
    s.kBlock = kernel.inWidth > 1024 ? 256 : 0;
    s.unrollK = 1;
  }
  s.queryTile = 16;
  s.parallel = true;
  return s;
}

GemmLayout gemmLayout(const KernelDesc &kernel, const Schedule &schedule) {
  GemmLayout l;
  l.K = std::max<int64_t>(1, kernel.inWidth);
  l.N = std::max<int64_t>(1, kernel.width);
  // The largest power-of-two width <= the preferred one that N admits (as
  // halide::vectorWidthFor, which this header cannot include).
  int vw = std::max(1, schedule.vectorWidth);
  while (vw > 1 && vw > l.N)
    vw /= 2;
  l.vectorWidth = vw;
  l.panelWidth = std::max(vw, schedule.tileCols / vw * vw);
  l.panels = (l.N + l.panelWidth - 1) / l.panelWidth;
  l.tileRows = std::max(1, schedule.tileRows);
  l.kBlock = schedule.kBlock > 0 && schedule.kBlock < l.K ? schedule.kBlock : l.K;
  l.kBlocks = (l.K + l.kBlock - 1) / l.kBlock;
  // Unrolling by a factor that does not divide the block would need a guard
  // inside the reduction loop, which costs more than the unroll gains.
  int u = std::max(1, schedule.unrollK);
  l.unrollK = l.kBlock % u == 0 && l.K % l.kBlock == 0 ? u : 1;
  return l;
}

} // namespace tmc
