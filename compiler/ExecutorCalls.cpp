//===- ExecutorCalls.cpp - One kernel call of the generated executor ------===//
//
// A call's block inside run(): the cache append, or the kernel with the
// views it makes for its buffers (sliced to the last row where the output
// asks for it), its decoding-step variant, and on a GPU the hand-back of its
// per-call views.
//
//===----------------------------------------------------------------------===//

#include "compiler/ExecutorWriter.h"

#include "compiler/Schedule.h"

#include "llvm/Support/FormatVariadic.h"

namespace tmc::executorgen {

void ExecutorWriter::cacheAppend(const KernelCall &call) {
  const CacheDesc &cache = plan.caches[call.args[1].slot.index];
  const Slot &from = call.args[0].slot;
  // A fused projection's k or v has its rows rowStride floats apart.
  const char *storage = cache.precision == "f16"    ? "CacheStorage::F16"
                        : cache.precision == "bf16" ? "CacheStorage::BF16"
                                                    : "CacheStorage::F32";
  os << "      appendCacheRows(" << pointer(call.args[1].slot) << ", " << storage << ", "
     << cache.width << ", P, " << pointer(from) << ", T, "
     << (from.strided() ? from.rowStride : cache.width) << ");\n";
}

/// Whether `call` writes the run's per-token output: with last_row_only it
/// then computes the last token's row alone, R rows from row `first` of its
/// per-token inputs. Such a call is row-wise (an LM head or output
/// projection, a norm or residual add): each output row reads its own input
/// rows and nothing of its position.
bool ExecutorWriter::lastRowSliced(const KernelCall &call) const {
  if (call.phase != KernelCall::Phase::Step || plan.outputRows != 0 ||
      call.args.back().slot.kind != Slot::Kind::Output)
    return false;
  switch (plan.kernels[call.kernel].kind) {
  case tmk::KernelKind::linear:
  case tmk::KernelKind::add:
  case tmk::KernelKind::activation:
  case tmk::KernelKind::gated_activation:
  case tmk::KernelKind::norm:
  case tmk::KernelKind::add_norm:
    return true;
  default:
    // No spec ends in another kernel (every stack ends in a linear, norm or
    // residual add); one that did would not honour last_row_only silently.
    llvm::report_fatal_error(llvm::Twine("the output is written by ") +
                             plan.kernels[call.kernel].symbol() + ", which is not row-wise");
  }
}

void ExecutorWriter::kernelCall(const KernelCall &call) {
  const KernelDesc &kernel = plan.kernels[call.kernel];
  const PackedWeight *pack = prepared.packOf(call);
  std::string name = "tmk_" + kernel.symbol() + suffix;
  std::string site = cxxStringLiteral(call.opName + " (" + call.location + ")");
  std::vector<std::string> perCall;
  std::vector<std::string> arguments = kernelArguments(call, pack, &perCall);
  const bool sliced = lastRowSliced(call);
  if (sliced)
    os << "      const int32_t R = lastRow ? 1 : T; // the rows this call computes\n"
       << "      const int64_t first = T - R;\n";
  views(call, pack, sliced);
  if (std::string decode = decodeSuffix(kernel); !decode.empty())
    os << "      if (int rc = (" << (sliced ? "R" : "T") << " == 1 ? " << name << decode << " : "
       << name << ")(";
  else
    os << "      if (int rc = " << name << "(";
  llvm::interleaveComma(arguments, os);
  os << "))\n        return kernelFailed(err, errLen, " << site << ", rc);\n";
  if (gpu) {
    os << "      if (int rc = deviceDone({";
    llvm::interleaveComma(perCall, os);
    os << "}))\n        return kernelFailed(err, errLen, " << site << ", rc);\n";
  }
  if (options.trace) {
    // Rows are the outermost extent; a row is everything inside it.
    const CallArg &out = call.args.back();
    int64_t width = 1;
    for (size_t d = 0; d + 1 < out.shape.extents.size(); ++d)
      width *= out.shape.extents[d];
    os << "      tmr_trace_call(" << &call - plan.calls.data() << ", " << pointer(out.slot) << ", "
       << (sliced ? "R" : extentText(out.shape.extents.back())) << ", " << width << ");\n";
  }
}

/// A View per buffer argument the call makes for itself (on a GPU, weights
/// have their persistent views instead).
void ExecutorWriter::views(const KernelCall &call, const PackedWeight *pack, bool sliced) {
  for (size_t a = 0; a < call.args.size(); ++a) {
    const CallArg &arg = call.args[a];
    if (arg.shape.isScalar || (gpu && (isWeight(arg.slot) || (pack && a == 1))))
      continue;
    if (pack && a == 1) {
      os << "      View a1(packed + " << pack->offset << ", " << pack->viewArguments() << ");\n";
      continue;
    }
    // A sliced call's per-token inputs start at row `first` (the output
    // is the caller's R rows).
    const bool rows =
        sliced && !arg.shape.extents.empty() && arg.shape.extents.back() == BufferShape::kTokens;
    std::string start = pointer(arg.slot);
    if (rows && arg.slot.kind != Slot::Kind::Output) {
      int64_t row = arg.slot.strided() ? arg.slot.rowStride : 1;
      for (size_t d = 0; !arg.slot.strided() && d + 1 < arg.shape.extents.size(); ++d)
        row *= arg.shape.extents[d];
      start = llvm::formatv("{0} + first * {1}", start, row).str();
    }
    os << "      View a" << a << "(" << start << ", "
       << (arg.shape.isInt32    ? "halide_type_int"
           : arg.shape.isUInt16 ? "halide_type_t(halide_type_uint, 16)"
                                : "halide_type_float")
       << ", {";
    llvm::interleaveComma(arg.shape.extents, os, [&](int64_t e) {
      os << (rows && e == BufferShape::kTokens ? std::string("R") : extentText(e));
    });
    os << "}";
    if (arg.slot.strided())
      os << ", " << arg.slot.rowStride;
    os << ");\n";
  }
}

/// The kernel's arguments as the call passes them; on a GPU also the
/// per-call views to hand back to the host after it (`perCall`).
std::vector<std::string> ExecutorWriter::kernelArguments(const KernelCall &call,
                                                         const PackedWeight *pack,
                                                         std::vector<std::string> *perCall) {
  std::vector<std::string> arguments;
  for (size_t a = 0; a < call.args.size(); ++a) {
    const CallArg &arg = call.args[a];
    if (arg.shape.isScalar)
      arguments.push_back(pointer(arg.slot));
    else if (!gpu)
      arguments.push_back("a" + std::to_string(a) + ".get()");
    else if (pack && a == 1)
      arguments.push_back(
          llvm::formatv("device->packed[{0}]->get()", pack - prepared.packs.data()).str());
    else if (isWeight(arg.slot))
      arguments.push_back(llvm::formatv("device->raw[{0}]->get()", rawViewOf(arg)).str());
    else {
      // The output stays the kernel's to write; Halide copies inputs in.
      arguments.push_back(
          llvm::formatv(a + 1 == call.args.size() ? "a{0}.get()" : "a{0}.input()", a).str());
      perCall->push_back(llvm::formatv("&a{0}", a).str());
    }
  }
  return arguments;
}

} // namespace tmc::executorgen
