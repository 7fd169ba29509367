//===- PreparedWeights.cpp - Packing and stacking weights at load time ----===//

#include "compiler/PreparedWeights.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"

#include <set>
#include <tuple>

namespace tmc {

namespace {
int64_t aligned32(int64_t floats) { return (floats + 31) / 32 * 32; }
} // namespace

std::string PackedWeight::viewArguments() const {
  const BufferShape shape = layout.packedShape();
  std::string text = shape.isBF16   ? "halide_type_t(halide_type_bfloat, 16), {"
                     : shape.isInt8 ? "halide_type_t(halide_type_int, 8), {"
                                    : "halide_type_t(halide_type_float, 32), {";
  for (size_t d = 0; d < shape.extents.size(); ++d)
    text += (d ? ", " : "") + std::to_string(shape.extents[d]);
  return text + "}";
}

std::vector<int64_t> manifestSources(const KernelPlan &plan, const Slot &slot) {
  if (slot.kind == Slot::Kind::Joined)
    return plan.joined[slot.index].parts;
  return {slot.index};
}

const PackedWeight *PreparedWeights::packOf(const KernelCall &call, const KernelPlan &plan) const {
  if (call.kind != KernelCall::Kind::Kernel)
    return nullptr;
  const KernelDesc &kernel = plan.kernels[call.kernel];
  const int index = kernel.packedArgument();
  if (index < 0 || call.args.size() <= static_cast<size_t>(index))
    return nullptr;
  const Slot &weight = call.args[static_cast<size_t>(index)].slot;
  // A linear reads its own pack; a tied table's lookup, the head's (any
  // kernel's pack of that table: each holds every row, in one precision).
  const bool own = kernel.kind == KernelKind::linear;
  for (const PackedWeight &pack : packs)
    if ((!own || pack.kernel == call.kernel) && pack.source.kind == weight.kind &&
        pack.source.index == weight.index &&
        (own || plan.kernels[pack.kernel].precision == kernel.precision))
      return &pack;
  return nullptr;
}

std::vector<std::string> quantizedStorage(const KernelPlan &plan) {
  std::vector<std::string> storage(plan.weights.size());
  std::vector<bool> unpacked(plan.weights.size(), false);
  for (const KernelCall &call : plan.calls) {
    if (call.kind != KernelCall::Kind::Kernel)
      continue;
    const KernelDesc &kernel = plan.kernels[call.kernel];
    for (size_t a = 0; a < call.args.size(); ++a) {
      const Slot &slot = call.args[a].slot;
      if (slot.kind != Slot::Kind::Weight && slot.kind != Slot::Kind::Joined)
        continue;
      const bool packed = static_cast<int>(a) == kernel.packedArgument();
      for (int64_t source : manifestSources(plan, slot)) {
        std::string &entry = storage[static_cast<size_t>(source)];
        // Two kernels packing it in different precisions: neither format.
        if (!packed || (!entry.empty() && entry != kernel.precision))
          unpacked[static_cast<size_t>(source)] = true;
        else
          entry = kernel.precision;
      }
    }
  }
  for (size_t i = 0; i < storage.size(); ++i)
    if (unpacked[i] || storage[i] == "f32")
      storage[i].clear();
  return storage;
}

PreparedWeights planPreparedWeights(const KernelPlan &plan, const TargetInfo &target) {
  PreparedWeights out;
  out.joinedOffset.assign(plan.joined.size(), -1);
  std::vector<bool> joinedReadRaw(plan.joined.size(), false);
  std::set<std::tuple<size_t, Slot::Kind, int64_t>> seen;
  for (const KernelCall &call : plan.calls) {
    if (call.kind != KernelCall::Kind::Kernel)
      continue;
    const KernelDesc &kernel = plan.kernels[call.kernel];
    for (size_t a = 0; a < call.args.size(); ++a) {
      const Slot &slot = call.args[a].slot;
      bool packed = static_cast<int>(a) == kernel.packedArgument();
      if (slot.kind == Slot::Kind::Weight && !packed)
        out.readRaw.insert(slot.index);
      if (slot.kind == Slot::Kind::Joined && !packed)
        joinedReadRaw[slot.index] = true;
      // A tied table's lookup reads its head's pack (packOf): the linear makes it.
      if (!packed || kernel.kind != KernelKind::linear ||
          !seen.insert({call.kernel, slot.kind, slot.index}).second)
        continue;
      // Each pack starts on an alignment boundary.
      PackedWeight pack{call.kernel, slot,
                        gemmLayout(kernel, plan.schedule(call.kernel, target)),
                        out.floats};
      out.floats += aligned32(pack.floats());
      out.packs.push_back(pack);
    }
  }
  // Every lookup of a table in a reduced precision has its head's pack
  // (tmk-tied-table-precision gives it one only where a linear packs it so).
  for (const KernelCall &call : plan.calls)
    if (call.kind == KernelCall::Kind::Kernel &&
        plan.kernels[call.kernel].kind == KernelKind::embed &&
        plan.kernels[call.kernel].packedArgument() >= 0 && !out.packOf(call, plan))
      llvm::report_fatal_error(llvm::Twine("no packed copy of the table that ") +
                               plan.kernels[call.kernel].symbol() + " reads");
  // Stacked weights read unpacked go after the packs.
  for (size_t j = 0; j < plan.joined.size(); ++j)
    if (joinedReadRaw[j]) {
      out.joinedOffset[j] = out.floats;
      out.floats += aligned32(plan.joined[j].floats());
    }
  return out;
}

namespace {

/// `weights[i]` of each part, copied one after another to `destination`:
/// stacking along dimension 0 of row-major tensors is concatenation.
void emitStack(llvm::raw_ostream &os, const JoinedWeight &joined,
               const std::vector<TensorSpec> &manifest, const std::string &destination) {
  os << "    {\n      float *to = " << destination << ";\n";
  for (int64_t part : joined.parts) {
    int64_t floats = elementCount(manifest[part].shape);
    os << "      std::memcpy(to, weights[" << part << "], sizeof(float) * " << floats << ");\n"
       << "      to += " << floats << ";\n";
  }
  os << "    }\n";
}

/// The branch of prepare() that packs a pre-quantized int8 or q4 weight
/// (docs/spec-language.md, "Quantized weight files"): its parts' values and
/// scales, stacked first when there are several, straight into the panels.
/// Parts pre-quantized and parts not cannot share one GEMM: refused.
void emitQuantizedPack(llvm::raw_ostream &os, const PackedWeight &pack, const KernelDesc &kernel,
                       const std::vector<int64_t> &parts, const std::vector<TensorSpec> &manifest,
                       const std::string &packKernel, const std::string &what) {
  const bool q4 = pack.layout.q4;
  const int64_t K = kernel.inWidth, N = kernel.width;
  // Per row: the values' bytes (q4: two values a byte, K in blocks of 32)
  // and the scales (int8: one f32; q4: an f16 per block).
  const int64_t rowBytes = q4 ? 16 * pack.layout.q4Blocks : K;
  const int64_t rowScales = q4 ? pack.layout.q4Blocks : 1;
  const char *valueType =
      q4 ? "halide_type_t(halide_type_uint, 8)" : "halide_type_t(halide_type_int, 8)";
  const char *scaleType = q4 ? "halide_type_t(halide_type_uint, 16)" : "halide_type_float";
  const char *scaleC = q4 ? "uint16_t" : "float";
  std::string all, any;
  for (int64_t part : parts) {
    std::string has = "scales[" + std::to_string(part) + "]";
    all += (all.empty() ? "" : " && ") + has;
    any += (any.empty() ? "" : " || ") + has;
  }
  if (parts.size() > 1)
    os << "    if (scales && (" << any << ") && !(" << all << ")) {\n"
       << "      delete block;\n"
       << "      std::snprintf(err, errLen, \"%s\", "
       << cxxStringLiteral(what + " are stacked into one GEMM: a weights file must hold all "
                                  "of them pre-quantized, or none")
       << ");\n      return 1;\n    }\n";
  os << "    if (scales && " << all << ") {\n";
  std::string values, scales;
  if (parts.size() == 1) {
    values = "weights[" + std::to_string(parts[0]) + "]";
    scales = "scales[" + std::to_string(parts[0]) + "]";
  } else {
    os << "      Aligned<uint8_t> values;\n      Aligned<" << scaleC << "> rowScales;\n"
       << "      if (!values.allocate(" << rowBytes * N << ") || !rowScales.allocate("
       << rowScales * N << ")) {\n"
       << "        delete block;\n"
       << "        std::snprintf(err, errLen, \"out of memory for a stacked weight\");\n"
       << "        return 1;\n      }\n";
    int64_t row = 0;
    for (int64_t part : parts) {
      const int64_t rows = manifest[part].shape.front();
      os << "      std::memcpy(values.data + " << row * rowBytes << ", weights[" << part << "], "
         << rows * rowBytes << ");\n"
         << "      std::memcpy(rowScales.data + " << row * rowScales << ", scales[" << part
         << "], sizeof(" << scaleC << ") * " << rows * rowScales << ");\n";
      row += rows;
    }
    values = "values.data";
    scales = "rowScales.data";
  }
  os << "      View q(" << values << ", " << valueType << ", {" << rowBytes << ", " << N << "});\n"
     << "      View s(" << scales << ", " << scaleType << ", {";
  if (q4)
    os << rowScales << ", ";
  os << N << "});\n"
     << "      if (int rc = " << packKernel << "(q.get(), s.get(), p.get())) {\n"
     << "        delete block;\n"
     << "        return kernelFailed(err, errLen, "
     << cxxStringLiteral("pack of pre-quantized " + what) << ", rc);\n      }\n    }\n";
}

} // namespace

void emitPrepare(llvm::raw_ostream &os, const KernelPlan &plan, const PreparedWeights &prepared,
                 const std::vector<RawView> &rawViews, const ExecutorOptions &options) {
  const std::vector<TensorSpec> &manifest = plan.weights;
  const bool gpu = options.target.gpu;
  const std::string &suffix = options.variantSuffix;
  // GPU: the packed block sits inside the DeviceWeights that also holds
  // the uploaded views.
  const char *blockType = gpu ? "DeviceWeights" : "Aligned<float>";
  const std::string blockData = gpu ? "block->block.data" : "block->data";
  os << "// Packs every linear weight once into the GEMMs' panel layout, stacking\n"
     << "// the parts of a fused projection's weights first"
     << (gpu ? "; then uploads the weights to the GPU, once.\n" : ".\n")
     << "int prepare(const void *const *weights, const void *const *scales, int32_t threads,\n"
     << "            tmr_weight_done_fn done,\n"
     << "            void *doneContext, void **prepared, char *err, size_t errLen) {\n"
     << "  tmr_halide_error_clear();\n"
     << "  tmr::useThreads(threads > 0 ? threads : " << options.defaultThreads << ");\n"
     << "  auto *block = new (std::nothrow) " << blockType << ";\n"
     << "  if (!block || !block->" << (gpu ? "block." : "") << "allocate(" << prepared.floats
     << ")) {\n"
     << "    delete block;\n"
     << "    std::snprintf(err, errLen, \"out of memory for the packed weights\");\n"
     << "    return 1;\n  }\n";
  // Stacked weights read unpacked (biases) are copied before any raw page
  // is released below.
  for (size_t j = 0; j < plan.joined.size(); ++j)
    if (prepared.joinedOffset[j] >= 0)
      emitStack(os, plan.joined[j], manifest,
                blockData + " + " + std::to_string(prepared.joinedOffset[j]));
  // Weights that runs also read raw (a tied head's embedding table) are
  // packed first: while both copies of such a table are resident, nothing
  // else is yet, so loading never peaks above the weights' own size.
  auto readRaw = [&](const PackedWeight &pack) {
    for (int64_t source : manifestSources(plan, pack.source))
      if (prepared.readRaw.count(source))
        return true;
    return false;
  };
  std::vector<const PackedWeight *> order;
  for (bool raw : {true, false})
    for (const PackedWeight &pack : prepared.packs)
      if (readRaw(pack) == raw)
        order.push_back(&pack);
  for (size_t i = 0; i < order.size(); ++i) {
    const PackedWeight &pack = *order[i];
    const KernelDesc &kernel = plan.kernels[pack.kernel];
    std::vector<int64_t> parts = manifestSources(plan, pack.source);
    std::string what;
    for (int64_t part : parts)
      what += (what.empty() ? "" : " + ") + manifest[part].name;
    const std::string packKernel = "tmk_pack_" + kernel.symbol() + suffix;
    os << "  {\n    View p(" << blockData << " + " << pack.offset << ", " << pack.viewArguments()
       << ");\n";
    if (pack.layout.quantized()) {
      // A file may hold the weight pre-quantized (`tmc quantize`): then
      // its values and scales are packed as they are.
      emitQuantizedPack(os, pack, kernel, parts, manifest, packKernel + "_quantized", what);
      os << "    else {\n";
    } else {
      os << "    {\n";
    }
    if (pack.source.kind == Slot::Kind::Joined) {
      const JoinedWeight &joined = plan.joined[pack.source.index];
      os << "    Aligned<float> stacked;\n"
         << "    if (!stacked.allocate(" << joined.floats() << ")) {\n"
         << "      delete block;\n"
         << "      std::snprintf(err, errLen, \"out of memory for a stacked weight\");\n"
         << "      return 1;\n    }\n";
      emitStack(os, joined, manifest, "stacked.data");
      os << "    View w(stacked.data, halide_type_float, {";
    } else {
      os << "    View w(weights[" << pack.source.index << "], halide_type_float, {";
    }
    os << kernel.inWidth << ", " << kernel.width << "});\n"
       << "    if (int rc = " << packKernel << "(w.get(), p.get())) {\n"
       << "      delete block;\n"
       << "      return kernelFailed(err, errLen, " << cxxStringLiteral("pack of " + what)
       << ", rc);\n    }\n    }\n";
    // A raw weight may go once its last pack is made; one that another
    // kernel reads (a table lookup) only as far as it can be read back.
    for (int64_t source : manifestSources(plan, pack.source)) {
      bool lastPack = true;
      for (size_t later = i + 1; later < order.size(); ++later)
        for (int64_t other : manifestSources(plan, order[later]->source))
          lastPack = lastPack && other != source;
      if (lastPack)
        os << "    if (done)\n      done(doneContext, " << source << ", "
           << (prepared.readRaw.count(source) ? 1 : 0) << ");\n";
    }
    os << "  }\n";
  }
  if (gpu) {
    os << "  // Halide opens libcuda.so, which only a driver's development files\n"
       << "  // provide; every driver ships libcuda.so.1. Loaded globally first, its\n"
       << "  // symbols are found either way (Halide looks in the process first).\n"
       << "  dlopen(\"libcuda.so.1\", RTLD_NOW | RTLD_GLOBAL);\n"
       << "  // Device copies go back to Halide's cache, not the driver, between calls.\n"
       << "  halide_reuse_device_allocations(nullptr, true);\n"
       << "  block->raw.resize(" << rawViews.size() << ");\n"
       << "  block->packed.resize(" << prepared.packs.size() << ");\n";
    // `view`: the View's type and extents, as PackedWeight::viewArguments.
    auto emitUpload = [&](const std::string &slot, const std::string &data, const std::string &view,
                          const std::string &what) {
      os << "  " << slot << " = new (std::nothrow) View(" << data << ", " << view << ");\n"
         << "  if (int rc = upload(" << slot << ")) {\n"
         << "    delete block;\n"
         << "    return kernelFailed(err, errLen, " << cxxStringLiteral("upload of " + what)
         << ", rc);\n"
         << "  }\n";
    };
    for (size_t i = 0; i < rawViews.size(); ++i) {
      const Slot &slot = rawViews[i].first;
      bool joined = slot.kind == Slot::Kind::Joined;
      std::string data =
          joined ? llvm::formatv("block->block.data + {0}", prepared.joinedOffset[slot.index]).str()
                 : llvm::formatv("weights[{0}]", slot.index).str();
      std::string what = joined ? "stacked weight " + std::to_string(slot.index)
                                : manifest[slot.index].name;
      std::string view;
      llvm::raw_string_ostream extents(view);
      extents << "halide_type_float, {";
      llvm::interleaveComma(rawViews[i].second, extents);
      extents << "}";
      emitUpload(llvm::formatv("block->raw[{0}]", i).str(), data, view, what);
    }
    for (size_t i = 0; i < prepared.packs.size(); ++i) {
      const PackedWeight &pack = prepared.packs[i];
      std::string what = pack.source.kind == Slot::Kind::Joined
                             ? "stacked weight " + std::to_string(pack.source.index)
                             : manifest[pack.source.index].name;
      emitUpload(llvm::formatv("block->packed[{0}]", i).str(),
                 llvm::formatv("block->block.data + {0}", pack.offset).str(), pack.viewArguments(),
                 "packed " + what);
    }
  }
  os << "  *prepared = block;\n  return 0;\n}\n\n"
     << "void release(void *prepared) { delete static_cast<" << blockType
     << " *>(prepared); }\n\n";
}

} // namespace tmc
