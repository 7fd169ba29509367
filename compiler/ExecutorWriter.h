//===- ExecutorWriter.h - The writer of a generated executor ----*- C++ -*-===//
//
// Private to compiler/ExecutorGen.cpp (the file's frame: declarations, run()
// and its phases, the model descriptor) and compiler/ExecutorCalls.cpp (one
// kernel call or cache append, its views and arguments).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/ExecutorGen.h"
#include "compiler/PreparedWeights.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tmc::executorgen {

/// Whether a slot is a weight (the manifest's, or several joined).
bool isWeight(const Slot &slot);
/// The C++ expression of a slot's first element inside run().
std::string slotPointer(const Slot &slot, const KernelPlan &plan, const PreparedWeights &prepared);
/// A row extent as run() spells it: T, P + T, S, or the number.
std::string extentText(int64_t extent);

/// Writes one executor (one ISA variant's, in a multi-ISA executable).
class ExecutorWriter {
public:
  ExecutorWriter(const KernelPlan &plan, const ExecutorOptions &options, llvm::raw_ostream &os);
  void write();

private:
  void declarations();
  void kernelDeclarations();
  void profileSlots();
  void run();
  void prologue();
  void phase(KernelCall::Phase phase);
  void openScope(KernelCall::Phase phase);
  void call(const KernelCall &call, KernelCall::Phase phase);
  void cacheAppend(const KernelCall &call);
  void kernelCall(const KernelCall &call);
  void views(const KernelCall &call, const PackedWeight *pack, bool sliced);
  void trace(const KernelCall &call, bool sliced);
  bool lastRowSliced(const KernelCall &call) const;
  bool perSequence(const KernelCall &call) const;
  bool blockable(const KernelCall &call) const;
  size_t rowBlockEnd(size_t begin, KernelCall::Phase phase) const;
  void rowBlocks(size_t begin, size_t end, KernelCall::Phase phase);
  bool batchable() const;
  /// A row extent as the call being written spells it (per sequence: its own).
  std::string extent(int64_t extent) const;
  std::vector<std::string> kernelArguments(const KernelCall &call, const PackedWeight *pack,
                                           std::vector<std::string> *perCall);
  void modelDescriptor();

  std::string pointer(const Slot &slot) const;
  size_t rawViewOf(const CallArg &arg);
  /// The suffix of a kernel's decoding-step variant ("" when it has none).
  std::string decodeSuffix(const KernelDesc &kernel) const {
    return decodeKernelSuffix(kernel, plan.schedule(&kernel - plan.kernels.data(), options.target));
  }
  /// The suffix of its variant for a batched step's sequence tasks ("" when none).
  std::string decodeRowsSuffix(const KernelDesc &kernel) const {
    return decodeRowsKernelSuffix(kernel,
                                  plan.schedule(&kernel - plan.kernels.data(), options.target));
  }
  /// Whether per-sequence calls [begin, end) may run for several sequences
  /// at once (runSequences): each writes its own sequence's rows, output
  /// rows or cache only, never rows of the arena that all sequences share.
  bool parallelSafe(size_t begin, size_t end) const;

  const KernelPlan &plan;
  const ExecutorOptions &options;
  llvm::raw_ostream &os;
  const ModelDesc &model;
  const std::string &suffix;
  const bool gpu;
  PreparedWeights prepared;
  /// GPU: every weight a kernel reads raw, with the shape it reads it in,
  /// gets one persistent view, uploaded by prepare().
  std::vector<RawView> rawViews;
  /// The call being written runs once per sequence of the run (inside a
  /// loop binding `s`, its SequenceRun), not once over all rows.
  bool inSequence = false;
  /// That loop is runSequences' lambda (parallelSafe), binding `rows` too.
  bool inParallelSequences = false;
  /// The call being written runs over rows [r0, r0 + R) of the run's token
  /// rows, inside a loop over blocks of them (rowBlocks).
  bool inRowBlock = false;
};

} // namespace tmc::executorgen
