//===- RunMemory.h - What a compiled model needs in memory ------*- C++ -*-===//
//
// `tmc check`'s estimate of a compiled model's footprint at run time, so that
// a model too large for the machine is reported before anyone compiles it,
// downloads its weights or waits for the out-of-memory killer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Frontend.h"

#include <cstdint>
#include <optional>

namespace tmc::tools {

/// Bytes a compiled model holds while it runs a max_seq-token sequence.
struct RunMemory {
  int64_t weights = 0;     ///< every weight as f32 (f16/bf16 files are widened at load)
  /// Linear weights again, packed into GEMM panels at load: 4 bytes an
  /// element for f32 GEMMs, 2 for bf16 ones (whose K is padded to even), 1
  /// for int8 ones (K padded to a multiple of 4) plus 8 per output channel,
  /// 36 per output channel per pair of 32-wide K-blocks for q4 ones.
  int64_t packed = 0;
  int64_t kvCache = 0;     ///< key/value caches (decoders)
  int64_t activations = 0; ///< the activation arena(s) at max_seq tokens
  int64_t output = 0;      ///< the output rows at max_seq tokens (logits can be large)
  /// Saturates at INT64_MAX rather than overflowing.
  int64_t total() const;
};

/// Forms the model's kernel plan (as `tmc compile` does, without compiling a
/// kernel) and reads the footprint off it; nullopt if the plan cannot be
/// formed (a spec `tmc compile` does not support yet).
std::optional<RunMemory> estimateRunMemory(const LoadedSpec &loaded);

} // namespace tmc::tools
