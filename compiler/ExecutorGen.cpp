//===- ExecutorGen.cpp - The generated C++ executor -----------------------===//

#include "compiler/ExecutorGen.h"

#include "compiler/Schedule.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace tmc {

namespace {


const char *dtypeEnum(DType dtype) {
  switch (dtype) {
  case DType::F32: return "TMR_F32";
  case DType::F16: return "TMR_F16";
  case DType::BF16: return "TMR_BF16";
  }
  return "TMR_F32";
}

std::string slotPointer(const Slot &slot, const KernelPlan &plan) {
  switch (slot.kind) {
  case Slot::Kind::Tokens: return "tokens";
  case Slot::Kind::Offset: return "P";
  case Slot::Kind::Segments: return "segments";
  case Slot::Kind::Length: return "L";
  case Slot::Kind::SourceLength: return "SL";
  case Slot::Kind::Weight: return llvm::formatv("args->weights[{0}]", slot.index).str();
  case Slot::Kind::Arena: return llvm::formatv("arena + {0} * T", slot.index).str();
  case Slot::Kind::Output: return "output";
  case Slot::Kind::Cache:
    return llvm::formatv("args->cache + {0}", plan.caches[slot.index].offset).str();
  }
  return "nullptr";
}

std::string extentText(int64_t extent) {
  if (extent == BufferShape::kTokens)
    return "T";
  if (extent == BufferShape::kKeys)
    return "P + T";
  if (extent == BufferShape::kSource)
    return "S";
  return std::to_string(extent);
}

const char *outputKind(const ModelSpec &spec) {
  switch (spec.output) {
  case OutputKind::LMHead: return "logits";
  case OutputKind::Classifier: return "classes";
  case OutputKind::Hidden: break;
  }
  return "hidden";
}

/// One linear weight as its GEMM reads it: packed by `tmk_pack_<kernel>` at
/// load (LowerPack.cpp's contract), at `offset` floats in the prepared block.
struct PackedWeight {
  size_t kernel;
  int64_t weight; ///< manifest index
  GemmLayout layout;
  int64_t offset;
  int64_t floats() const { return layout.panelWidth * layout.K * layout.panels; }
};

std::vector<PackedWeight> planPacking(const KernelPlan &plan, const TargetInfo &target) {
  std::vector<PackedWeight> packs;
  std::map<std::pair<size_t, int64_t>, size_t> seen;
  int64_t offset = 0;
  for (const KernelCall &call : plan.calls) {
    if (call.kind != KernelCall::Kind::Kernel ||
        plan.kernels[call.kernel].kind != KernelKind::Linear)
      continue;
    int64_t weight = call.args[1].slot.index;
    if (!seen.try_emplace({call.kernel, weight}, packs.size()).second)
      continue;
    const KernelDesc &kernel = plan.kernels[call.kernel];
    PackedWeight pack{call.kernel, weight,
                      gemmLayout(kernel, scheduleFor(kernel, target, plan.schedules)), offset};
    // Each pack starts on an alignment boundary.
    offset += (pack.floats() + 31) / 32 * 32;
    packs.push_back(pack);
  }
  return packs;
}

} // namespace

std::string generateExecutor(const KernelPlan &plan, const ModelSpec &spec,
                             const std::vector<TensorSpec> &manifest,
                             const ExecutorOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::vector<PackedWeight> packs = planPacking(plan, options.target);
  const std::string &suffix = options.variantSuffix;
  // Weights some kernel reads as they are, not (only) through a packed copy.
  std::set<int64_t> readRaw;
  for (const KernelCall &call : plan.calls) {
    if (call.kind != KernelCall::Kind::Kernel)
      continue;
    bool linear = plan.kernels[call.kernel].kind == KernelKind::Linear;
    for (size_t a = 0; a < call.args.size(); ++a)
      if (call.args[a].slot.kind == Slot::Kind::Weight && !(linear && a == 1))
        readRaw.insert(call.args[a].slot.index);
  }
  int64_t layers = (spec.encoder.present ? spec.encoder.layers : 0) +
                   (spec.decoder.present ? spec.decoder.layers : 0);
  int64_t arenaFloats = std::max(plan.arenaWidth, plan.encodeArenaWidth) * spec.maxSeq;
  int64_t preparedFloats = packs.empty() ? 0 : packs.back().offset + packs.back().floats();
  auto packOf = [&](const KernelCall &call) -> const PackedWeight * {
    for (const PackedWeight &pack : packs)
      if (pack.kernel == call.kernel && pack.weight == call.args[1].slot.index)
        return &pack;
    return nullptr;
  };
  const bool gpu = options.target.gpu;
  // GPU: every weight a kernel reads raw, with the shape it reads it in,
  // gets one persistent view, uploaded by prepare().
  std::vector<std::pair<int64_t, std::vector<int64_t>>> rawViews;
  auto rawViewOf = [&](const CallArg &arg) {
    std::pair<int64_t, std::vector<int64_t>> key{arg.slot.index, arg.shape.extents};
    auto it = std::find(rawViews.begin(), rawViews.end(), key);
    if (it != rawViews.end())
      return static_cast<size_t>(it - rawViews.begin());
    rawViews.push_back(key);
    return rawViews.size() - 1;
  };
  if (gpu)
    for (const KernelCall &call : plan.calls)
      if (call.kind == KernelCall::Kind::Kernel)
        for (size_t a = 0; a < call.args.size(); ++a)
          if (call.args[a].slot.kind == Slot::Kind::Weight && !(a == 1 && packOf(call)))
            rawViewOf(call.args[a]);
  auto hasGemv = [&](const KernelDesc &kernel) {
    if (kernel.kind != KernelKind::Linear)
      return false;
    Schedule schedule = scheduleFor(kernel, options.target, plan.schedules);
    return schedule.gpu && schedule.decodeVariant;
  };
  os << "// Generated by tmc from " << options.sourceName << ": the executor of model '"
     << spec.name << "'.\n// " << plan.kernels.size() << " kernels, " << plan.calls.size()
     << " calls. Do not edit; change the spec and recompile.\n"
     << "#define TMR_GPU " << (gpu ? 1 : 0) << "\n" << executorPrelude();

  os << "const tmr_tensor_desc kTensors[] = {\n";
  for (const TensorSpec &tensor : manifest) {
    os << "  {" << cxxStringLiteral(tensor.name) << ", " << tensor.shape.size() << ", {";
    llvm::interleaveComma(tensor.shape, os);
    os << "}, " << dtypeEnum(tensor.dtype) << "},\n";
  }
  os << "};\n\n} // namespace\n\nextern \"C\" {\n";
  if (options.trace)
    os << "void tmr_trace_call(int32_t, const float *, int64_t, int64_t);\n";
  for (const KernelDesc &kernel : plan.kernels) {
    if (kernel.kind == KernelKind::Linear)
      os << "int tmk_pack_" << kernel.name() << suffix
         << "(halide_buffer_t *, halide_buffer_t *);\n";
    std::vector<BufferShape> signature = kernelSignature(kernel);
    for (const char *gemvSuffix : {"", "_gemv"}) {
      if (*gemvSuffix && !hasGemv(kernel))
        continue;
      os << "int tmk_" << kernel.name() << suffix << gemvSuffix << "(";
      for (size_t i = 0; i < signature.size(); ++i)
        os << (i ? ", " : "") << (signature[i].isScalar ? "int32_t" : "halide_buffer_t *");
      os << ");\n";
    }
  }
  os << "}\n\nnamespace {\n\n";

  // The calls of one phase, in a scope that binds T, P, tokens, segments and
  // the arena for it.
  auto emitCalls = [&](KernelCall::Phase phase) {
    for (const KernelCall &call : plan.calls) {
      if (call.phase != phase)
        continue;
      os << "    { // " << call.opName << " " << call.location << "\n";
      size_t site = &call - plan.calls.data();
      os << "      ProfileTimer timer(profileSlots[" << site << "], "
         << (phase == KernelCall::Phase::Encode ? "2" : "T == 1 ? 1 : 0") << ");\n";
      if (call.kind == KernelCall::Kind::CacheAppend) {
        const CacheDesc &cache = plan.caches[call.args[1].slot.index];
        os << "      std::memcpy(args->cache + " << cache.offset
           << " + static_cast<size_t>(P) * " << cache.width << ", "
           << slotPointer(call.args[0].slot, plan)
           << ", sizeof(float) * static_cast<size_t>(T) * " << cache.width << ");\n    }\n";
        continue;
      }
      const KernelDesc &kernel = plan.kernels[call.kernel];
      const PackedWeight *pack = packOf(call);
      // GPU: the kernel's arguments as the call passes them, and the
      // per-call views to hand back to the host after it.
      std::vector<std::string> gpuArgs(call.args.size());
      std::vector<std::string> perCall;
      for (size_t a = 0; gpu && a < call.args.size(); ++a) {
        const CallArg &arg = call.args[a];
        if (arg.shape.isScalar)
          gpuArgs[a] = slotPointer(arg.slot, plan);
        else if (pack && a == 1)
          gpuArgs[a] = llvm::formatv("device->packed[{0}]->get()", pack - packs.data()).str();
        else if (arg.slot.kind == Slot::Kind::Weight)
          gpuArgs[a] = llvm::formatv("device->raw[{0}]->get()", rawViewOf(arg)).str();
        else {
          gpuArgs[a] = llvm::formatv(a + 1 == call.args.size() ? "a{0}.get()" : "a{0}.input()", a)
                           .str();
          perCall.push_back(llvm::formatv("&a{0}", a).str());
        }
      }
      for (size_t a = 0; a < call.args.size(); ++a) {
        const CallArg &arg = call.args[a];
        if (arg.shape.isScalar || (gpu && (arg.slot.kind == Slot::Kind::Weight ||
                                           (pack && a == 1))))
          continue;
        if (pack && a == 1) {
          os << "      View a1(packed + " << pack->offset << ", halide_type_float, {"
             << pack->layout.panelWidth << ", " << pack->layout.K << ", " << pack->layout.panels
             << "});\n";
          continue;
        }
        os << "      View a" << a << "(" << slotPointer(arg.slot, plan) << ", "
           << (arg.shape.isInt32 ? "halide_type_int" : "halide_type_float") << ", {";
        llvm::interleaveComma(arg.shape.extents, os, [&](int64_t e) { os << extentText(e); });
        os << "});\n";
      }
      if (hasGemv(kernel))
        os << "      if (int rc = (T == 1 ? tmk_" << kernel.name() << suffix << "_gemv : tmk_"
           << kernel.name() << suffix << ")(";
      else
        os << "      if (int rc = tmk_" << kernel.name() << suffix << "(";
      for (size_t a = 0; a < call.args.size(); ++a) {
        os << (a ? ", " : "");
        if (gpu)
          os << gpuArgs[a];
        else if (call.args[a].shape.isScalar)
          os << slotPointer(call.args[a].slot, plan);
        else
          os << "a" << a << ".get()";
      }
      os << "))\n        return kernelFailed(err, errLen, "
         << cxxStringLiteral(call.opName + " (" + call.location + ")") << ", rc);\n";
      if (gpu) {
        os << "      if (int rc = deviceDone({";
        llvm::interleaveComma(perCall, os);
        os << "}))\n        return kernelFailed(err, errLen, "
           << cxxStringLiteral(call.opName + " (" + call.location + ")") << ", rc);\n";
      }
      if (options.trace) {
        // Rows are the outermost extent; a row is everything inside it.
        const CallArg &out = call.args.back();
        int64_t width = 1;
        for (size_t d = 0; d + 1 < out.shape.extents.size(); ++d)
          width *= out.shape.extents[d];
        os << "      tmr_trace_call(" << (&call - plan.calls.data()) << ", "
           << slotPointer(out.slot, plan) << ", " << extentText(out.shape.extents.back())
           << ", " << width << ");\n";
      }
      os << "    }\n";
    }
  };
  // Opens a phase's scope: its arena, and segment ids defaulting to 0.
  auto openScope = [&](int64_t arenaWidth, const char *rows, const char *tokens,
                       const char *segments, const char *length) {
    os << "    const int32_t T = " << rows << ";\n"
       << "    const int32_t L = " << length << ";\n"
       << "    // Kernels may load whole aligned vectors: the arena and copies of the\n"
       << "    // token and segment ids start on TMR_BUFFER_ALIGNMENT boundaries.\n"
       << "    // The caller's arena (a session's, sized for max_seq) or one of our own.\n"
       << "    Aligned<float> storage;\n"
       << "    Aligned<int32_t> ids;\n"
       << "    float *arena = args->arena;\n"
       << "    if ((!arena && !storage.allocate(static_cast<size_t>(" << arenaWidth << ") * T)) ||\n"
       << "        !ids.allocate(2 * static_cast<size_t>(T))) {\n"
       << "      std::snprintf(err, errLen, \"out of memory for the activation arena\");\n"
       << "      return 1;\n    }\n"
       << "    if (!arena)\n"
       << "      arena = storage.data;\n"
       << "    int32_t *tokens = ids.data, *segments = ids.data + T;\n"
       << "    std::memcpy(tokens, " << tokens << ", sizeof(int32_t) * T);\n"
       << "    // Segment ids default to 0 (docs/spec-language.md).\n"
       << "    const int32_t *givenSegments = " << segments << ";\n"
       << "    for (int32_t t = 0; t < T; ++t)\n"
       << "      segments[t] = givenSegments ? givenSegments[t] : 0;\n"
       << "    (void)tokens, (void)segments, (void)arena, (void)L;\n";
  };

  // One profile slot per call site (TMR_PROFILE), written out at exit.
  // A multi-ISA executable links one executor per variant; only the one
  // the dispatcher picked writes its profile.
  os << "bool selected = " << (suffix.empty() ? "true" : "false") << ";\n\n";
  os << "ProfileSlot profileSlots[] = {\n";
  for (const KernelCall &call : plan.calls)
    os << "  {" << cxxStringLiteral(call.kind == KernelCall::Kind::CacheAppend ? "cache_append"
                                                                    : plan.kernels[call.kernel].name())
       << ", " << cxxStringLiteral(call.opName) << ", " << cxxStringLiteral(call.location) << ", {}, {}},\n";
  if (plan.calls.empty())
    os << "  {\"\", \"\", \"\", {}, {}},\n";
  os << "};\n\n"
     << "struct ProfileDump {\n"
     << "  ~ProfileDump() {\n"
     << "    if (profiling && selected)\n"
     << "      writeProfile(profileSlots, " << plan.calls.size() << ");\n"
     << "  }\n} profileDump;\n\n";
  os << "int run(const tmr_run_args *args, char *err, size_t errLen) {\n"
     << "  const int32_t P = static_cast<int32_t>(args->offset);\n"
     << "  if (args->num_tokens < 1 || args->offset < 0 || args->offset + args->num_tokens > "
     << spec.maxSeq << ") {\n"
     << "    std::snprintf(err, errLen, \"%lld tokens after %lld cached ones: this model "
        "accepts 1 to "
     << spec.maxSeq << " in all\", static_cast<long long>(args->num_tokens), "
        "static_cast<long long>(args->offset));\n"
     << "    return 1;\n  }\n";
  if (plan.cacheFloats == 0)
    os << "  if (P != 0) {\n"
       << "    std::snprintf(err, errLen, \"this model keeps no cache: offset must be 0\");\n"
       << "    return 1;\n  }\n";
  if (plan.hasEncode)
    os << "  const int32_t S = static_cast<int32_t>(args->num_source_tokens);\n"
       << "  if (args->num_source_tokens < 1 || args->num_source_tokens > " << spec.maxSeq
       << " || (P == 0 && !args->source_tokens)) {\n"
       << "    std::snprintf(err, errLen, \"this encoder-decoder model needs 1 to " << spec.maxSeq
       << " source tokens, %lld given\", static_cast<long long>(args->num_source_tokens));\n"
       << "    return 1;\n  }\n";
  if (plan.hasEncode)
    os << "  const int32_t SL = args->length > 0 ? static_cast<int32_t>(args->length) : S;\n"
       << "  if (SL > S) {\n"
       << "    std::snprintf(err, errLen, \"length %d exceeds the source's %d tokens\", SL, S);\n"
       << "    return 1;\n  }\n";
  else
    os << "  if (args->length < 0 || args->length > args->num_tokens) {\n"
       << "    std::snprintf(err, errLen, \"length %lld is outside [1, %lld]\", "
          "static_cast<long long>(args->length), static_cast<long long>(args->num_tokens));\n"
       << "    return 1;\n  }\n";
  os << "  for (int32_t w = 0; w < " << manifest.size() << "; ++w)\n"
     << "    if (!aligned(args->weights[w])) {\n"
     << "      std::snprintf(err, errLen, \"weight '%s' is not aligned to %d bytes\", "
        "kTensors[w].name, TMR_BUFFER_ALIGNMENT);\n"
     << "      return 1;\n    }\n";
  os << "  if (args->arena && !aligned(args->arena)) {\n"
     << "    std::snprintf(err, errLen, \"the arena is not aligned to %d bytes\", "
        "TMR_BUFFER_ALIGNMENT);\n"
     << "    return 1;\n  }\n";
  if (plan.cacheFloats > 0)
    os << "  if (!aligned(args->cache)) {\n"
       << "    std::snprintf(err, errLen, \"the cache is not aligned to %d bytes\", "
          "TMR_BUFFER_ALIGNMENT);\n"
       << "    return 1;\n  }\n";
  std::string outputRows = plan.outputRows ? std::to_string(plan.outputRows) : "args->num_tokens";
  os << "  // The caller's output may sit anywhere; kernels write an aligned one.\n"
     << "  const size_t outputFloats = static_cast<size_t>(" << outputRows << ") * "
     << plan.outputWidth << ";\n"
     << "  Aligned<float> outputCopy;\n"
     << "  float *output = args->output;\n"
     << "  if (!aligned(output)) {\n"
     << "    if (!outputCopy.allocate(outputFloats)) {\n"
     << "      std::snprintf(err, errLen, \"out of memory for the output\");\n"
     << "      return 1;\n    }\n"
     << "    output = outputCopy.data;\n  }\n";
  if (!packs.empty() || gpu)
    os << "  if (!args->prepared) {\n"
       << "    std::snprintf(err, errLen, \"the weights were not prepared (call prepare() first)\");\n"
       << "    return 1;\n  }\n";
  if (gpu)
    os << "  const DeviceWeights *device = static_cast<const DeviceWeights *>(args->prepared);\n"
       << "  (void)device;\n";
  else if (!packs.empty())
    os << "  const float *packed = static_cast<const Aligned<float> *>(args->prepared)->data;\n";
  os << "  tmr_halide_error_clear();\n"
     << "  halide_set_num_threads(args->num_threads > 0 ? args->num_threads : "
     << options.defaultThreads << ");\n";
  if (plan.hasEncode) {
    // The source is encoded once, by the first run of a sequence; later runs
    // read its keys and values from the cross-attention caches.
    os << "  if (P == 0) {\n";
    openScope(plan.encodeArenaWidth, "S", "args->source_tokens", "args->segments", "SL");
    emitCalls(KernelCall::Phase::Encode);
    os << "  }\n";
  }
  os << "  {\n";
  // In an encoder-decoder model the segment ids label the source; the
  // decoder's tokens are segment 0.
  openScope(plan.arenaWidth, "static_cast<int32_t>(args->num_tokens)", "args->tokens",
            plan.hasEncode ? "static_cast<const int32_t *>(nullptr)" : "args->segments",
            plan.hasEncode ? "P + T"
                            : "args->length > 0 ? static_cast<int32_t>(args->length) : P + T");
  emitCalls(KernelCall::Phase::Step);
  os << "  }\n"
     << "  if (output != args->output)\n"
     << "    std::memcpy(args->output, output, sizeof(float) * outputFloats);\n"
     << "  return 0;\n}\n\n";

  if (!packs.empty() || gpu) {
    int64_t total = packs.empty() ? 0 : packs.back().offset + packs.back().floats();
    // GPU: the packed block sits inside the DeviceWeights that also holds
    // the uploaded views.
    const char *blockType = gpu ? "DeviceWeights" : "Aligned<float>";
    const char *blockData = gpu ? "block->block.data" : "block->data";
    os << "// Packs every linear weight once into the GEMMs' panel layout"
       << (gpu ? ", then uploads the weights to the GPU, once.\n" : ".\n")
       << "int prepare(const void *const *weights, int32_t threads, tmr_weight_done_fn done,\n"
       << "            void *doneContext, void **prepared, char *err, size_t errLen) {\n"
       << "  tmr_halide_error_clear();\n"
       << "  halide_set_num_threads(threads > 0 ? threads : " << options.defaultThreads << ");\n"
       << "  auto *block = new (std::nothrow) " << blockType << ";\n"
       << "  if (!block || !block->" << (gpu ? "block." : "") << "allocate(" << total << ")) {\n"
       << "    delete block;\n"
       << "    std::snprintf(err, errLen, \"out of memory for the packed weights\");\n"
       << "    return 1;\n  }\n";
    // Weights that runs also read raw (a tied head's embedding table) are
    // packed first: while both copies of such a table are resident, nothing
    // else is yet, so loading never peaks above the weights' own size.
    std::vector<const PackedWeight *> order;
    for (bool raw : {true, false})
      for (const PackedWeight &pack : packs)
        if (readRaw.count(pack.weight) == static_cast<size_t>(raw))
          order.push_back(&pack);
    for (size_t i = 0; i < order.size(); ++i) {
      const PackedWeight &pack = *order[i];
      const KernelDesc &kernel = plan.kernels[pack.kernel];
      os << "  {\n    View w(weights[" << pack.weight << "], halide_type_float, {"
         << kernel.inWidth << ", " << kernel.width << "});\n"
         << "    View p(" << blockData << " + " << pack.offset << ", halide_type_float, {"
         << pack.layout.panelWidth << ", " << pack.layout.K << ", " << pack.layout.panels
         << "});\n"
         << "    if (int rc = tmk_pack_" << kernel.name() << suffix << "(w.get(), p.get())) {\n"
         << "      delete block;\n"
         << "      return kernelFailed(err, errLen, " << cxxStringLiteral("pack of " + manifest[pack.weight].name)
         << ", rc);\n    }\n";
      // The raw weight may go once its last pack is made; one that another
      // kernel reads (a table lookup) only as far as it can be read back.
      bool lastPack = true;
      for (size_t later = i + 1; later < order.size(); ++later)
        lastPack = lastPack && order[later]->weight != pack.weight;
      if (lastPack)
        os << "    if (done)\n      done(doneContext, " << pack.weight << ", "
           << (readRaw.count(pack.weight) ? 1 : 0) << ");\n";
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
         << "  block->packed.resize(" << packs.size() << ");\n";
      auto emitUpload = [&](const std::string &slot, const std::string &data,
                            const std::vector<int64_t> &extents, const std::string &what) {
        os << "  " << slot << " = new (std::nothrow) View(" << data << ", halide_type_float, {";
        llvm::interleaveComma(extents, os);
        os << "});\n"
           << "  if (int rc = upload(" << slot << ")) {\n"
           << "    delete block;\n"
           << "    return kernelFailed(err, errLen, " << cxxStringLiteral("upload of " + what) << ", rc);\n"
           << "  }\n";
      };
      for (size_t i = 0; i < rawViews.size(); ++i)
        emitUpload(llvm::formatv("block->raw[{0}]", i).str(),
                   llvm::formatv("weights[{0}]", rawViews[i].first).str(), rawViews[i].second,
                   manifest[rawViews[i].first].name);
      for (size_t i = 0; i < packs.size(); ++i)
        emitUpload(llvm::formatv("block->packed[{0}]", i).str(),
                   llvm::formatv("block->block.data + {0}", packs[i].offset).str(),
                   {packs[i].layout.panelWidth, packs[i].layout.K, packs[i].layout.panels},
                   "packed " + manifest[packs[i].weight].name);
    }
    os << "  *prepared = block;\n  return 0;\n}\n\n"
       << "void release(void *prepared) { delete static_cast<" << blockType
       << " *>(prepared); }\n\n";
  }
  os << "const tmr_model_desc kModel = {\n"
     << "  TMR_ABI_VERSION, " << cxxStringLiteral(spec.name) << ", \"" << outputKind(spec) << "\", "
     << spec.vocab << ", " << spec.maxSeq << ", " << plan.outputWidth << ", "
     << plan.outputRows << ", " << plan.cacheFloats << ", " << spec.segments << ", "
     << (plan.hasEncode ? 1 : 0) << ",\n"
     << "  " << manifest.size() << ", kTensors, run, "
     << (packs.empty() && !gpu ? "nullptr, nullptr" : "prepare, release") << ",\n  " << spec.dModel
     << ", " << layers << ", " << arenaFloats << ", " << preparedFloats
     << ",\n};\n\n} // namespace\n\n"
     << "extern \"C\" const tmr_model_desc *tmr_compiled_model" << suffix << "(void) {\n"
     << "  selected = true;\n  return &kModel;\n}\n";
  if (suffix.empty())
    os << "\nextern \"C\" const char *tmr_compiled_isa(void) { return "
       << cxxStringLiteral(options.target.isaName()) << "; }\n";
  return text;
}

} // namespace tmc
