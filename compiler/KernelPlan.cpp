//===- KernelPlan.cpp - The kernel plan's own operations ------------------===//
//
// Sizes, schedule resolution and the --emit=kernels listing: what is done
// with a plan once formKernels (KernelPlanFromIR.cpp) has read it.
//
//===----------------------------------------------------------------------===//

#include "compiler/KernelPlan.h"
#include "compiler/Target.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <set>

namespace tmc {

int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  return count;
}

const Schedule &KernelPlan::schedule(size_t kernel, const TargetInfo &target) const {
  auto it = std::find(scheduleTargets.begin(), scheduleTargets.end(), target.halideTarget);
  assert(it != scheduleTargets.end() && "no schedules resolved for this target");
  return schedules[static_cast<size_t>(it - scheduleTargets.begin())][kernel];
}

void resolveSchedules(KernelPlan &plan, const TargetInfo &target, const ScheduleTable &tuned) {
  plan.scheduleTargets.clear();
  plan.schedules.clear();
  for (const TargetInfo &concrete : target.concreteTargets()) {
    plan.scheduleTargets.push_back(concrete.halideTarget);
    std::vector<Schedule> &schedules = plan.schedules.emplace_back();
    for (const KernelDesc &kernel : plan.kernels)
      schedules.push_back(scheduleFor(kernel, concrete, tuned));
  }
}

namespace {
void printShape(const BufferShape &b, llvm::raw_ostream &os) {
  if (b.isScalar) {
    os << "i32";
    return;
  }
  os << (b.isInt32 ? "i32[" : b.isUInt16 ? "u16[" : "f32[");
  llvm::interleave(
      b.extents, os,
      [&](int64_t e) {
        os << (e == BufferShape::kTokens   ? "T"
               : e == BufferShape::kKeys   ? "P+T"
               : e == BufferShape::kSource ? "S"
                                           : std::to_string(e));
      },
      "x");
  os << "]";
}
} // namespace

void printKernelPlan(const KernelPlan &plan, llvm::raw_ostream &os) {
  os << "// " << plan.kernels.size() << " kernels, " << plan.calls.size()
     << " calls, arena " << plan.arenaWidth << " x T floats, output " << plan.outputWidth
     << " x " << (plan.outputRows ? std::to_string(plan.outputRows) : "T") << " floats";
  if (!plan.caches.empty()) {
    os << ", " << plan.caches.size() << " caches of " << plan.cacheBytes << " bytes";
    std::set<std::string> stored;
    for (const CacheDesc &cache : plan.caches)
      if (cache.precision != "f32")
        stored.insert(cache.precision);
    if (!stored.empty())
      os << " (" << llvm::join(stored, ", ") << " rows)";
    if (plan.runChunk > 0)
      os << ", runs of up to " << plan.runChunk << " tokens";
  }
  os << "\n\nkernels:\n";
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    os << "  k" << i << " " << plan.kernels[i].name() << " (";
    llvm::interleaveComma(kernelSignature(plan.kernels[i]), os,
                          [&](const BufferShape &b) { printShape(b, os); });
    os << ")\n";
  }
  for (size_t i = 0; i < plan.joined.size(); ++i) {
    os << (i ? "" : "\njoined weights (stacked once at load):\n") << "  joined" << i << " = w";
    llvm::interleave(plan.joined[i].parts, os, " + w");
    os << "\n";
  }
  os << "\ncalls:\n";
  for (const KernelCall &call : plan.calls) {
    os << "  " << (call.phase == KernelCall::Phase::Encode ? "encode: " : "")
       << (call.kind == KernelCall::Kind::CacheAppend ? std::string("append")
                                                               : "k" + std::to_string(call.kernel))
       << "(";
    llvm::interleaveComma(call.args, os, [&](const CallArg &arg) {
      const Slot &s = arg.slot;
      switch (s.kind) {
      case Slot::Kind::Tokens: os << "tokens"; break;
      case Slot::Kind::Offset: os << "offset"; break;
      case Slot::Kind::Segments: os << "segments"; break;
      case Slot::Kind::Length: os << "length"; break;
      case Slot::Kind::SourceLength: os << "source_length"; break;
      case Slot::Kind::Weight: os << "w" << s.index; break;
      case Slot::Kind::Joined: os << "joined" << s.index; break;
      case Slot::Kind::Arena:
        os << "arena+" << s.index << "T";
        if (s.strided())
          os << "[" << s.column << ":" << s.column + s.width << " of " << s.rowStride << "]";
        break;
      case Slot::Kind::Output: os << "output"; break;
      case Slot::Kind::Cache: os << "cache" << s.index; break;
      }
    });
    os << ")  // " << call.opName << " " << call.location << "\n";
  }
}

} // namespace tmc
