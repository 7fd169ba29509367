//===- RunMemory.cpp - What a compiled model needs in memory --------------===//
//
// The figures come from the same kernel plan the executor is generated from:
// arena widths (from live ranges), cache sizes and the linear weights that
// prepare() packs. Packing pads each weight to whole register-tile panels; the
// estimate counts the weights unpadded, so it is a slight underestimate.
//
//===----------------------------------------------------------------------===//

#include "compiler/tools/RunMemory.h"

#include "compiler/KernelPlan.h"
#include "compiler/Pipeline.h"
#include "compiler/SaturatingMath.h"

#include <limits>
#include <set>

namespace tmc::tools {

int64_t RunMemory::total() const {
  return saturatingAdd(saturatingAdd(saturatingAdd(weights, packed), saturatingAdd(kvCache, activations)),
                       output);
}

std::optional<RunMemory> estimateRunMemory(const LoadedSpec &loaded) {
  const ModelSpec &spec = *loaded.spec;
  // A plan that cannot be formed only means no estimate: `tmc compile`
  // reports why, at the spec's lines; `tmc check` stays quiet about it.
  PipelineOptions pipeline;
  pipeline.loaded = &loaded;
  pipeline.quiet = true;
  llvm::Expected<std::unique_ptr<PlannedModel>> model = runPipeline(pipeline);
  if (!model) {
    llvm::consumeError(model.takeError());
    return std::nullopt;
  }
  const KernelPlan *plan = &(*model)->plan;
  const std::vector<TensorSpec> &manifest = plan->weights;

  constexpr int64_t kFloat = 4;
  RunMemory memory;
  for (const TensorSpec &tensor : manifest)
    memory.weights = saturatingAdd(memory.weights, saturatingMul(elementCount(tensor.shape), kFloat));
  // A fused projection packs its stacked weight: the parts' bytes again.
  std::set<int64_t> packedWeights;
  for (const KernelCall &call : plan->calls)
    if (call.kind == KernelCall::Kind::Kernel &&
        plan->kernels[call.kernel].kind == KernelKind::linear && call.args.size() > 1) {
      const Slot &weight = call.args[1].slot;
      if (weight.kind == Slot::Kind::Weight)
        packedWeights.insert(weight.index);
      else if (weight.kind == Slot::Kind::Joined)
        packedWeights.insert(plan->joined[weight.index].parts.begin(),
                             plan->joined[weight.index].parts.end());
    }
  for (int64_t index : packedWeights)
    if (index >= 0 && index < static_cast<int64_t>(manifest.size()))
      memory.packed =
          saturatingAdd(memory.packed, saturatingMul(elementCount(manifest[index].shape), kFloat));
  memory.kvCache = saturatingMul(plan->cacheFloats, kFloat);
  // The encoder phase's arena (S = source tokens) and the step's (T tokens)
  // are live at different times, but each up to max_seq rows.
  int64_t arena = std::max(plan->arenaWidth, plan->encodeArenaWidth);
  memory.activations = saturatingMul(saturatingMul(arena, spec.maxSeq), kFloat);
  int64_t rows = plan->outputRows > 0 ? plan->outputRows : spec.maxSeq;
  memory.output = saturatingMul(saturatingMul(rows, plan->outputWidth), kFloat);
  return memory;
}

} // namespace tmc::tools
