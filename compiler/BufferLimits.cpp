//===- BufferLimits.cpp - Buffers too large for a compiled kernel ---------===//

#include "compiler/BufferLimits.h"

#include "compiler/SaturatingMath.h"
#include "compiler/Schedule.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <limits>

namespace tmc {

namespace {

std::string shapeText(const std::vector<int64_t> &outermostFirst) {
  std::string text = "[";
  for (size_t i = 0; i < outermostFirst.size(); ++i)
    text += (i ? ", " : "") + std::to_string(outermostFirst[i]);
  return text + "]";
}

/// One buffer a call passes its kernel, at its largest.
struct CallBuffer {
  std::vector<int64_t> extents; ///< innermost first, rows at max_seq
  int64_t span = 0;             ///< elements from its first to past its last
  std::string packedNote;       ///< how a packed weight grew, if it did
};

CallBuffer measure(const KernelPlan &plan, const KernelCall &call, size_t argIndex,
                   const TargetInfo *target) {
  const CallArg &arg = call.args[argIndex];
  CallBuffer buffer;
  // A run's tokens, the keys cached so far and an encoder's source are each
  // at most max_seq rows.
  for (int64_t extent : arg.shape.extents)
    buffer.extents.push_back(extent < 0 ? plan.model.maxSeq : extent);
  buffer.span = elementCount(buffer.extents);
  // A column range of a wider row (q, k, v of a fused projection) spans the
  // whole rows: Halide checks extent x stride of each dimension too.
  if (arg.slot.strided() && !buffer.extents.empty())
    buffer.span = std::max(buffer.span, saturatingMul(buffer.extents.back(), arg.slot.rowStride));
  const KernelDesc &kernel = plan.kernels[call.kernel];
  if (target && kernel.kind == KernelKind::linear && argIndex == 1 && !plan.schedules.empty())
    for (const TargetInfo &variant : target->concreteTargets()) {
      GemmLayout layout = gemmLayout(kernel, plan.schedule(call.kernel, variant));
      int64_t packed = saturatingMul(saturatingMul(layout.panelWidth, layout.K), layout.panels);
      if (packed > buffer.span) {
        buffer.span = packed;
        buffer.packedNote = ", packed for " + variant.name + " into " +
                            shapeText({layout.panels, layout.K, layout.panelWidth});
      }
    }
  return buffer;
}

/// "tensor 'embed.tokens' [1048576, 1048576]", "cache 'decoder.layers.0.k' [64, 512]", ...
std::string describe(const KernelPlan &plan, const KernelCall &call, size_t argIndex,
                     const CallBuffer &buffer) {
  const Slot &slot = call.args[argIndex].slot;
  auto weightName = [&](int64_t index) {
    return index >= 0 && index < static_cast<int64_t>(plan.weights.size())
               ? "'" + plan.weights[index].name + "'"
               : "#" + std::to_string(index);
  };
  std::vector<int64_t> outermostFirst(buffer.extents.rbegin(), buffer.extents.rend());
  std::string shape = shapeText(outermostFirst);
  switch (slot.kind) {
  case Slot::Kind::Weight:
    if (slot.index >= 0 && slot.index < static_cast<int64_t>(plan.weights.size()))
      shape = shapeText(plan.weights[slot.index].shape);
    return "tensor " + weightName(slot.index) + " " + shape;
  case Slot::Kind::Joined: {
    std::string names;
    if (slot.index >= 0 && slot.index < static_cast<int64_t>(plan.joined.size())) {
      const JoinedWeight &joined = plan.joined[slot.index];
      for (size_t i = 0; i < joined.parts.size(); ++i)
        names += (i ? ", " : "") + weightName(joined.parts[i]);
      shape = shapeText(joined.shape);
    }
    return "the stacked weight of " + names + " " + shape;
  }
  case Slot::Kind::Cache:
    if (slot.index >= 0 && slot.index < static_cast<int64_t>(plan.caches.size()))
      return "cache '" + plan.caches[slot.index].name + "' " + shape;
    return "a cache " + shape;
  case Slot::Kind::Output:
    return "the model's output " + shape;
  default:
    return argIndex + 1 == call.args.size()
               ? "its result " + shape
               : "its input #" + std::to_string(argIndex + 1) + " " + shape;
  }
}

/// "FILE:LINE:COL: tm.embed (NAME)" from a call's "NAME @ FILE:LINE:COL".
std::string callText(const KernelCall &call) {
  auto [name, file] = llvm::StringRef(call.location).split(" @ ");
  if (file.empty())
    return name.empty() ? call.opName : call.opName + " (" + name.str() + ")";
  return file.str() + ": " + call.opName + " (" + name.str() + ")";
}

} // namespace

std::optional<std::string> findOversizedBuffer(const KernelPlan &plan, const TargetInfo *target) {
  std::optional<std::string> first;
  int64_t others = 0;
  for (const KernelCall &call : plan.calls) {
    // A cache append is a copy in the executor, not a Halide kernel.
    if (call.kind != KernelCall::Kind::Kernel)
      continue;
    for (size_t i = 0; i < call.args.size(); ++i) {
      if (call.args[i].shape.isScalar)
        continue;
      CallBuffer buffer = measure(plan, call, i, target);
      if (buffer.span <= kMaxBufferElements)
        continue;
      if (first) {
        ++others;
        continue;
      }
      first = callText(call) + " runs as kernel " + plan.kernels[call.kernel].name() +
              ", which would take " + describe(plan, call, i, buffer) + ", " +
              std::to_string(buffer.span) +
              " elements" + buffer.packedNote +
              "; a kernel's buffer spans at most 2147483647 (2^31 - 1) elements, on every "
              "target";
    }
  }
  if (first && others > 0)
    *first += " (" + std::to_string(others) + " more buffer" + (others > 1 ? "s are" : " is") +
              " too large as well)";
  return first;
}

} // namespace tmc
