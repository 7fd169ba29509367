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

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

namespace tmc::executorgen {

namespace {

/// Kernels whose output rows each read only their own input rows and
/// nothing of their position: they may run over any rows, the last alone
/// or a batch's sequences together. (A rope reads its position from its
/// table's rows, which a rope_table call writes per sequence.)
bool rowWise(tmk::KernelKind kind) {
  switch (kind) {
  case tmk::KernelKind::linear:
  case tmk::KernelKind::rope:
  case tmk::KernelKind::add:
  case tmk::KernelKind::activation:
  case tmk::KernelKind::gated_activation:
  case tmk::KernelKind::norm:
  case tmk::KernelKind::add_norm:
  case tmk::KernelKind::segments:
    return true;
  default:
    return false;
  }
}

} // namespace

void ExecutorWriter::cacheAppend(const KernelCall &call) {
  const CacheDesc &cache = plan.caches[call.args[1].slot.index];
  const Slot &from = call.args[0].slot;
  // A fused projection's k or v has its rows rowStride floats apart.
  const char *storage = cache.precision == "f16"    ? "CacheStorage::F16"
                        : cache.precision == "bf16" ? "CacheStorage::BF16"
                                                    : "CacheStorage::F32";
  const int64_t stride = from.strided() ? from.rowStride : cache.width;
  const std::string rows =
      pointer(from) + (inSequence ? " + s.first * " + std::to_string(stride) : std::string());
  if (cache.ring()) {
    // Moves the rows its window still reads to its front when these would
    // not fit after them (tmk-window-caches).
    os << "      if (int rc = appendRingRows(s.cache + " << cache.offset << ", " << storage << ", "
       << cache.width << ", " << cache.capacity << ", " << cache.keep << ", s.offset, " << rows
       << ", " << extent(BufferShape::kTokens) << ", " << stride << ", "
       << cxxStringLiteral(cache.name) << ", err, errLen))\n        return rc;\n";
    return;
  }
  os << "      appendCacheRows(" << pointer(call.args[1].slot) << ", " << storage << ", "
     << cache.width << ", " << pointer(Slot{Slot::Kind::Offset}) << ", " << rows << ", "
     << extent(BufferShape::kTokens) << ", " << stride << ");\n";
}

std::string ExecutorWriter::pointer(const Slot &slot) const {
  if (inSequence)
    switch (slot.kind) {
    case Slot::Kind::Offset:
      return "s.offset";
    case Slot::Kind::Length:
      return "s.length";
    case Slot::Kind::SourceLength:
      return "s.sourceLength";
    case Slot::Kind::Cache:
      return "s.cache + " + std::to_string(plan.caches[slot.index].rowsOffset());
    default:
      break;
    }
  return slotPointer(slot, plan, prepared);
}

std::string ExecutorWriter::extent(int64_t extent) const {
  if (inSequence && extent == BufferShape::kTokens)
    return "s.tokens";
  if (inSequence && extent == BufferShape::kKeys)
    return "s.offset + s.tokens";
  if (inSequence && extent == BufferShape::kSource)
    return "s.source";
  return extentText(extent);
}

/// Whether `arg` is an activation (or the output) of fixed rows, not one
/// row per token: a pooled row, Linformer's keys projected to k rows, a
/// classifier's output. Each sequence has its own.
static bool fixedRows(const CallArg &arg) {
  return (arg.slot.kind == Slot::Kind::Arena || arg.slot.kind == Slot::Kind::Output) &&
         !arg.shape.isScalar &&
         (arg.shape.extents.empty() || arg.shape.extents.back() != BufferShape::kTokens);
}

/// Whether `call` runs once per sequence of a batched run: anything that
/// reads positions, lengths or caches, mixes rows (attention, pooling,
/// learned positions) or has rows of its own (fixedRows).
/// Row-wise kernels over token rows run once over all rows, so a batch of
/// decoding steps multiplies its weights as one GEMM (an encoder-decoder's
/// encode phase likewise, over the new sequences' sources).
bool ExecutorWriter::perSequence(const KernelCall &call) const {
  if (call.kind == KernelCall::Kind::CacheAppend)
    return true;
  if (!rowWise(plan.kernels[call.kernel].kind))
    return true;
  for (const CallArg &arg : call.args) {
    switch (arg.slot.kind) {
    case Slot::Kind::Offset:
    case Slot::Kind::Length:
    case Slot::Kind::SourceLength:
    case Slot::Kind::Cache:
      return true;
    default:
      break;
    }
    if (fixedRows(arg))
      return true;
    for (int64_t e : arg.shape.extents)
      if (e == BufferShape::kKeys)
        return true;
  }
  return false;
}

namespace {
/// The arena rows a slot spans, in units of T floats: [first, last), a row
/// every `stride` (a column part spans its whole rows).
struct ArenaRows {
  int64_t first, last, stride;
  bool overlaps(const ArenaRows &o) const { return first < o.last && o.first < last; }
  bool sameRows(const ArenaRows &o) const { return first == o.first && stride == o.stride; }
};
ArenaRows arenaRows(const Slot &slot) {
  const int64_t stride = slot.rowStride ? slot.rowStride : slot.width;
  return {slot.index, slot.index + stride, stride};
}
} // namespace

bool ExecutorWriter::parallelSafe(size_t begin, size_t end) const {
  if (gpu)
    return false;
  // The arena plan (tmk-plan-buffers) lets a call write over a value that an
  // earlier call read last, also with rows of another width: GQA's attention
  // writes sequence b's output rows of 48 floats over the q+k+v rows of 80
  // that sequences before b read. In order, those have been read; run at
  // once, they may not have been. Only a write onto the same rows it
  // overlaps (a value in place of another, each sequence its own rows) is
  // safe for sequences in parallel.
  std::vector<ArenaRows> used, written;
  for (size_t k = begin; k < end; ++k) {
    const KernelCall &call = plan.calls[k];
    if (call.kind == KernelCall::Kind::Kernel && lastRowSliced(call))
      return false;
    for (size_t a = 0; a < call.args.size(); ++a) {
      const CallArg &arg = call.args[a];
      if (arg.slot.kind != Slot::Kind::Arena)
        continue;
      if (fixedRows(arg))
        return false;
      used.push_back(arenaRows(arg.slot));
      if (call.kind == KernelCall::Kind::Kernel && a + 1 == call.args.size())
        written.push_back(used.back());
    }
  }
  for (const ArenaRows &w : written)
    for (const ArenaRows &u : used)
      if (w.overlaps(u) && !w.sameRows(u))
        return false;
  return true;
}

/// Whether `call` may run in row blocks (rowBlocks): a kernel over the run's
/// token rows whose arguments are weights or per-token rows, each output row
/// reading its own input rows only.
bool ExecutorWriter::blockable(const KernelCall &call) const {
  if (gpu || options.rowBlock <= 0 || call.kind != KernelCall::Kind::Kernel || perSequence(call) ||
      lastRowSliced(call))
    return false;
  const int packedArg = plan.kernels[call.kernel].packedArgument();
  for (size_t a = 0; a < call.args.size(); ++a) {
    const CallArg &arg = call.args[a];
    if (arg.shape.isScalar || isWeight(arg.slot) || static_cast<int>(a) == packedArg)
      continue;
    if (arg.shape.extents.empty() || arg.shape.extents.back() != BufferShape::kTokens)
      return false;
  }
  return true;
}

/// One past the last call of the row-block group that starts at `begin`:
/// consecutive blockable calls of `phase`, as long as running them block by
/// block computes what running each over all rows does. The arena plan
/// (tmk-plan-buffers) lets a call write over a value that an earlier call
/// read last; run in blocks, the earlier call still reads that value's
/// later rows after the write. That is harmless only where the write lands
/// on the same rows (the same offset and row stride: a value written in
/// place of another), so the group ends before any other such write.
size_t ExecutorWriter::rowBlockEnd(size_t begin, KernelCall::Phase phase) const {
  std::vector<ArenaRows> read;
  size_t end = begin;
  for (; end < plan.calls.size(); ++end) {
    const KernelCall &call = plan.calls[end];
    if (call.phase != phase || !blockable(call))
      break;
    const Slot &out = call.args.back().slot;
    if (out.kind == Slot::Kind::Arena) {
      const ArenaRows written = arenaRows(out);
      const bool clobbers = llvm::any_of(
          read, [&](const ArenaRows &r) { return written.overlaps(r) && !written.sameRows(r); });
      if (clobbers)
        break;
    }
    for (size_t a = 0; a + 1 < call.args.size(); ++a)
      if (call.args[a].slot.kind == Slot::Kind::Arena)
        read.push_back(arenaRows(call.args[a].slot));
  }
  return end;
}

/// Calls [begin, end) (rowBlockEnd) one block of `rowBlock` token rows at a
/// time: a block's values stay in cache from the call that writes them to
/// the calls that read them, where over all rows of a long run they would
/// go out to memory and back. Each call is traced whole after the blocks.
void ExecutorWriter::rowBlocks(size_t begin, size_t end, KernelCall::Phase phase) {
  os << "    for (int32_t r0 = 0; r0 < T; r0 += " << options.rowBlock << ") { // " << end - begin
     << " row-wise calls, block by block\n"
     << "    const int32_t R = std::min<int32_t>(" << options.rowBlock << ", T - r0);\n";
  inRowBlock = true;
  for (size_t k = begin; k < end; ++k)
    call(plan.calls[k], phase);
  inRowBlock = false;
  os << "    }\n";
  for (size_t k = begin; k < end; ++k)
    trace(plan.calls[k], false);
}

/// Whether one run may carry several sequences (tmr_model_desc.max_batch):
/// models on the CPU whose values of fixed rows are each made and read
/// inside one loop over the sequences (phase() groups consecutive
/// per-sequence calls of a phase), so that no sequence's value is
/// overwritten by the next's before it is read. Otherwise the runtime runs
/// a batch's sequences one by one.
bool ExecutorWriter::batchable() const {
  if (gpu)
    return false;
  std::map<int64_t, int> writtenIn; // a fixed-rows arena value's offset -> its loop
  int loop = -1;
  bool inLoop = false;
  KernelCall::Phase loopPhase = KernelCall::Phase::Step;
  for (const KernelCall &call : plan.calls) {
    const bool per = perSequence(call);
    if (per && (!inLoop || call.phase != loopPhase))
      ++loop;
    inLoop = per;
    loopPhase = call.phase;
    for (size_t a = 0; a < call.args.size(); ++a) {
      const CallArg &arg = call.args[a];
      if (arg.slot.kind != Slot::Kind::Arena || !fixedRows(arg))
        continue;
      if (a + 1 == call.args.size()) {
        writtenIn[arg.slot.index] = loop;
      } else if (auto it = writtenIn.find(arg.slot.index);
                 it != writtenIn.end() && (it->second != loop || !per)) {
        return false;
      }
    }
  }
  return true;
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
  // No spec ends in another kernel (every stack ends in a linear, norm or
  // residual add); one that did would not honour last_row_only silently.
  if (!rowWise(plan.kernels[call.kernel].kind))
    llvm::report_fatal_error(llvm::Twine("the output is written by ") +
                             plan.kernels[call.kernel].symbol() + ", which is not row-wise");
  return true;
}

void ExecutorWriter::kernelCall(const KernelCall &call) {
  const KernelDesc &kernel = plan.kernels[call.kernel];
  const PackedWeight *pack = prepared.packOf(call, plan);
  std::string name = "tmk_" + kernel.symbol() + suffix;
  std::string site = cxxStringLiteral(call.opName + " (" + call.location + ")");
  std::vector<std::string> perCall;
  std::vector<std::string> arguments = kernelArguments(call, pack, &perCall);
  const bool sliced = lastRowSliced(call);
  // With last_row_only, each sequence's last row: one call over all rows when
  // every sequence has one (decoding steps), else one call per sequence.
  if (sliced)
    os << "      const bool eachLast = lastRow && T != B;\n"
       << "      for (int32_t b = 0; b < (eachLast ? B : 1); ++b) {\n"
       << "      const int32_t R = eachLast ? 1 : lastRow ? B : T; // the rows this call computes\n"
       << "      const int64_t first = eachLast ? seqs[b].first + seqs[b].tokens - 1 : 0;\n"
       << "      float *const out = output + (eachLast ? b : 0) * int64_t(" << plan.outputWidth
       << ");\n";
  views(call, pack, sliced);
  std::string rows = inParallelSequences ? decodeRowsSuffix(kernel) : "";
  if (std::string decode = decodeSuffix(kernel); !decode.empty())
    os << "      if (int rc = ("
       << (sliced || inRowBlock ? std::string("R")
           : inSequence         ? std::string("s.tokens")
                                : std::string("T"))
       << " == 1 ? "
       << (rows.empty() ? name + decode : "(rows ? " + name + rows + " : " + name + decode + ")")
       << " : " << name << ")(";
  else
    os << "      if (int rc = " << name << "(";
  llvm::interleaveComma(arguments, os);
  os << "))\n        return kernelFailed(err, errLen, " << site << ", rc);\n";
  if (gpu) {
    os << "      if (int rc = deviceDone({";
    llvm::interleaveComma(perCall, os);
    os << "}))\n        return kernelFailed(err, errLen, " << site << ", rc);\n";
  }
  if (sliced) {
    trace(call, true);
    os << "      }\n";
  }
}

/// Reports the call's output (runtime/trace.h): after a per-sequence call's
/// loop, all of its rows.
void ExecutorWriter::trace(const KernelCall &call, bool sliced) {
  if (!options.trace)
    return;
  // Rows are the outermost extent; a row is everything inside it.
  const CallArg &out = call.args.back();
  int64_t width = 1;
  for (size_t d = 0; d + 1 < out.shape.extents.size(); ++d)
    width *= out.shape.extents[d];
  os << "      tmr_trace_call(" << &call - plan.calls.data() << ", "
     << (sliced ? std::string("out") : pointer(out.slot)) << ", "
     << (sliced ? "R" : extentText(out.shape.extents.back())) << ", " << width << ");\n";
}

/// A View per buffer argument the call makes for itself (on a GPU, weights
/// have their persistent views instead).
void ExecutorWriter::views(const KernelCall &call, const PackedWeight *pack, bool sliced) {
  const int packedArg = plan.kernels[call.kernel].packedArgument();
  for (size_t a = 0; a < call.args.size(); ++a) {
    const CallArg &arg = call.args[a];
    const bool readsPack = pack && static_cast<int>(a) == packedArg;
    if (arg.shape.isScalar || (gpu && (isWeight(arg.slot) || readsPack)))
      continue;
    if (readsPack) {
      os << "      View a" << a << "(packed + " << pack->offset << ", " << pack->viewArguments()
         << ");\n";
      continue;
    }
    // A sliced call's per-token inputs start at row `first` (the output
    // is `out`, the caller's R rows); a sequence's, at its first row.
    const bool rows = (sliced || inSequence || inRowBlock) && !arg.shape.extents.empty() &&
                      arg.shape.extents.back() == BufferShape::kTokens;
    std::string start = pointer(arg.slot);
    if (sliced && arg.slot.kind == Slot::Kind::Output) {
      start = "out";
    } else if (inSequence && arg.slot.kind == Slot::Kind::Output && fixedRows(arg)) {
      // A classifier's rows: output_rows per sequence, in the run's order.
      start = llvm::formatv("output + b * int64_t({0})", plan.outputRows * plan.outputWidth).str();
    } else if (rows) {
      int64_t row = arg.slot.strided() ? arg.slot.rowStride : 1;
      for (size_t d = 0; !arg.slot.strided() && d + 1 < arg.shape.extents.size(); ++d)
        row *= arg.shape.extents[d];
      start = llvm::formatv("{0} + {1} * {2}", start,
                            sliced       ? "first"
                            : inRowBlock ? "r0"
                                         : "s.first",
                            row)
                  .str();
    }
    os << "      View a" << a << "(" << start << ", "
       << (arg.shape.isInt32    ? "halide_type_int"
           : arg.shape.isUInt16 ? "halide_type_t(halide_type_uint, 16)"
                                : "halide_type_float")
       << ", {";
    llvm::interleaveComma(arg.shape.extents, os, [&](int64_t e) {
      os << ((sliced || inRowBlock) && e == BufferShape::kTokens ? std::string("R") : extent(e));
    });
    os << "}";
    if (arg.slot.strided())
      os << ", " << arg.slot.rowStride;
    os << ");\n";
    // A cache bounded by a window holds positions from its header's on:
    // the view's rows are those positions (the kernel's key coordinates).
    if (arg.slot.kind == Slot::Kind::Cache && plan.caches[arg.slot.index].ring())
      os << "      a" << a << ".startAt(ringFirstPosition(s.cache + "
         << plan.caches[arg.slot.index].offset << "));\n";
  }
}

/// The kernel's arguments as the call passes them; on a GPU also the
/// per-call views to hand back to the host after it (`perCall`).
std::vector<std::string> ExecutorWriter::kernelArguments(const KernelCall &call,
                                                         const PackedWeight *pack,
                                                         std::vector<std::string> *perCall) {
  std::vector<std::string> arguments;
  const int packedArg = plan.kernels[call.kernel].packedArgument();
  for (size_t a = 0; a < call.args.size(); ++a) {
    const CallArg &arg = call.args[a];
    if (arg.shape.isScalar)
      arguments.push_back(pointer(arg.slot));
    else if (!gpu)
      arguments.push_back("a" + std::to_string(a) + ".get()");
    else if (pack && static_cast<int>(a) == packedArg)
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
