//===- ExecutorOptions.h - How an executor is generated ---------*- C++ -*-===//
//
// What the executor generator (ExecutorGen.h) and the weight preparation it
// emits (PreparedWeights.h) are told beyond the plan, and the one helper
// both write strings with. Its own header, so
// that neither of the two includes the other.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/Target.h"

#include <string>

namespace tmc {

/// How one executor is generated.
struct ExecutorOptions {
  int defaultThreads = 0;   ///< `tmc compile --threads`; 0 lets Halide use every core
  TargetInfo target;        ///< the kernels' target: it fixes the packed weight layout
  bool trace = false;       ///< report every kernel call's output (runtime/trace.h)
  /// `tmc compile --max-batch`: the sequences one run may carry
  /// (tmr_model_desc.max_batch) where the model can batch them.
  int maxBatch = 16;
  /// `tmc compile --row-block`: consecutive row-wise kernels run over blocks
  /// of this many token rows, one block through all of them before the next
  /// (0: each kernel over all rows). See ExecutorWriter::rowBlockEnd.
  int rowBlock = 0;
  /// One variant of a multi-ISA build ("_avx2"): its kernels are
  /// tmk_<kernel><suffix> and its model tmr_compiled_model<suffix>(), which
  /// the dispatcher (generateDispatcher) calls. Empty: the executable's only
  /// executor, defining tmr_compiled_model() and tmr_compiled_isa() itself.
  std::string variantSuffix;
};

/// `text` as a C++ string literal, quotes and backslashes escaped: how every
/// part of the generator writes a string into the executor.
std::string cxxStringLiteral(const std::string &text);

} // namespace tmc
