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
#include <string>
#include <utility>

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
  // Keyed by precision too: a weight two GEMMs pack differently is held twice.
  std::set<std::pair<int64_t, std::string>> packedWeights; // (manifest index, precision)
  for (const KernelCall &call : plan->calls)
    if (call.kind == KernelCall::Kind::Kernel &&
        plan->kernels[call.kernel].kind == KernelKind::linear && call.args.size() > 1) {
      const std::string &precision = plan->kernels[call.kernel].precision;
      const Slot &weight = call.args[1].slot;
      if (weight.kind == Slot::Kind::Weight)
        packedWeights.insert({weight.index, precision});
      else if (weight.kind == Slot::Kind::Joined)
        for (int64_t part : plan->joined[weight.index].parts)
          packedWeights.insert({part, precision});
    }
  for (const auto &[index, precision] : packedWeights) {
    if (index < 0 || index >= static_cast<int64_t>(manifest.size()))
      continue;
    const std::vector<int64_t> &shape = manifest[index].shape;
    int64_t bytes = saturatingMul(elementCount(shape), kFloat);
    if (shape.size() == 2) {
      int64_t outputs = shape[0], inputs = shape[1];
      // bf16 panels hold K in pairs, [2, P, ceil(K/2), panels]: the weight
      // [N, K] with K rounded up to even, 2 bytes an element.
      if (precision == "bf16")
        bytes = saturatingMul(saturatingMul(outputs, inputs + inputs % 2), 2);
      // int8 panels hold K in quads and two more rows of 4 bytes per
      // column, its f32 scale and int32 correction, [4, P, ceil(K/4) + 2,
      // panels]: per output, K rounded up to a multiple of 4, plus 8 bytes.
      if (precision == "int8")
        bytes = saturatingMul(outputs, saturatingAdd(saturatingMul((inputs + 3) / 4, 4), 8));
      // q4 panels hold K-blocks of 32 in pairs, 9 rows of 4 bytes per
      // column per pair (two blocks' 16 bytes of nibbles and two f16
      // scales): per output, 36 bytes per pair of ceil(K/32) blocks.
      if (precision == "q4") {
        int64_t blocks = inputs / 32 + (inputs % 32 != 0);
        bytes = saturatingMul(outputs, saturatingMul((blocks + 1) / 2, 36));
      }
    }
    memory.packed = saturatingAdd(memory.packed, bytes);
  }
  memory.kvCache = plan->cacheBytes;
  // The encoder phase's arena (S = source tokens) and the step's (T tokens)
  // are live at different times, but each up to max_seq rows.
  int64_t arena = std::max(plan->arenaWidth, plan->encodeArenaWidth);
  memory.activations = saturatingMul(saturatingMul(arena, spec.maxSeq), kFloat);
  int64_t rows = plan->outputRows > 0 ? plan->outputRows : spec.maxSeq;
  memory.output = saturatingMul(saturatingMul(rows, plan->outputWidth), kFloat);
  return memory;
}

} // namespace tmc::tools
