//===- ExecutorGen.cpp - The generated C++ executor -----------------------===//
//
// Writes only what depends on the model, in the order of the file it
// becomes: the declarations (the kernels, the weight table, a profile slot
// per call), run() (its prologue, then one block per kernel call inside each
// phase's scope), prepare() (PreparedWeights.cpp) and the model descriptor.
// The fixed code they call, checks, views, working memory and profiling, is
// the runtime's (runtime/executor_support.h, runtime/executor_gpu.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/ExecutorGen.h"

#include "compiler/PreparedWeights.h"
#include "compiler/Schedule.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

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

/// tmr_quantized for quantizedStorage's entry.
const char *quantizedEnum(const std::string &storage) {
  return storage == "int8"   ? "TMR_QUANT_INT8"
         : storage == "q4"   ? "TMR_QUANT_Q4"
         : storage == "bf16" ? "TMR_QUANT_BF16"
                             : "TMR_QUANT_NONE";
}

bool isWeight(const Slot &slot) {
  return slot.kind == Slot::Kind::Weight || slot.kind == Slot::Kind::Joined;
}

std::string slotPointer(const Slot &slot, const KernelPlan &plan,
                        const PreparedWeights &prepared) {
  switch (slot.kind) {
  case Slot::Kind::Tokens: return "tokens";
  case Slot::Kind::Offset: return "P";
  case Slot::Kind::Segments: return "segments";
  case Slot::Kind::Length: return "L";
  case Slot::Kind::SourceLength: return "SL";
  case Slot::Kind::Weight: return llvm::formatv("args->weights[{0}]", slot.index).str();
  case Slot::Kind::Joined:
    return llvm::formatv("packed + {0}", prepared.joinedOffset[slot.index]).str();
  case Slot::Kind::Arena:
    if (slot.column)
      return llvm::formatv("arena + {0} * T + {1}", slot.index, slot.column).str();
    return llvm::formatv("arena + {0} * T", slot.index).str();
  case Slot::Kind::Output: return "output";
  case Slot::Kind::Cache:
    return llvm::formatv("static_cast<uint8_t *>(args->cache) + {0}",
                         plan.caches[slot.index].offset)
        .str();
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

const char *outputKind(const ModelDesc &model) {
  switch (model.output) {
  case OutputKind::LMHead: return "logits";
  case OutputKind::Classifier: return "classes";
  case OutputKind::Hidden: break;
  }
  return "hidden";
}

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
  bool lastRowSliced(const KernelCall &call) const;
  std::vector<std::string> kernelArguments(const KernelCall &call, const PackedWeight *pack,
                                           std::vector<std::string> *perCall);
  void modelDescriptor();

  std::string pointer(const Slot &slot) const { return slotPointer(slot, plan, prepared); }
  size_t rawViewOf(const CallArg &arg);
  /// The suffix of a kernel's decoding-step variant ("" when it has none).
  std::string decodeSuffix(const KernelDesc &kernel) const {
    return decodeKernelSuffix(kernel,
                              plan.schedule(&kernel - plan.kernels.data(), options.target));
  }

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
};

ExecutorWriter::ExecutorWriter(const KernelPlan &plan, const ExecutorOptions &options,
                               llvm::raw_ostream &os)
    : plan(plan), options(options), os(os), model(plan.model), suffix(options.variantSuffix),
      gpu(options.target.gpu), prepared(planPreparedWeights(plan, options.target)) {
  if (gpu)
    for (const KernelCall &call : plan.calls)
      if (call.kind == KernelCall::Kind::Kernel)
        for (size_t a = 0; a < call.args.size(); ++a)
          if (isWeight(call.args[a].slot) && !(a == 1 && prepared.packOf(call)))
            rawViewOf(call.args[a]);
}

size_t ExecutorWriter::rawViewOf(const CallArg &arg) {
  auto it = std::find_if(rawViews.begin(), rawViews.end(), [&](const RawView &view) {
    return view.first.kind == arg.slot.kind && view.first.index == arg.slot.index &&
           view.second == arg.shape.extents;
  });
  if (it != rawViews.end())
    return static_cast<size_t>(it - rawViews.begin());
  rawViews.push_back({arg.slot, arg.shape.extents});
  return rawViews.size() - 1;
}

void ExecutorWriter::write() {
  declarations();
  run();
  if (!prepared.empty() || gpu)
    emitPrepare(os, plan, prepared, rawViews, options);
  modelDescriptor();
}

/// The banner, the includes, the kernels, the weight table and the profile.
void ExecutorWriter::declarations() {
  os << "// Generated by tmc from " << model.sourceName << ": the executor of model '"
     << model.name << "'.\n// " << plan.kernels.size() << " kernels, " << plan.calls.size()
     << " calls. Do not edit; change the spec and recompile.\n";
  os << "#include \"runtime/executor_" << (gpu ? "gpu" : "support")
     << ".h\"\n\n#include <cstdio>\n#include <cstring>\n";
  if (gpu)
    os << "#include <dlfcn.h> // prepare() loads the CUDA driver\n";
  os << "#include <new>\n\n";
  kernelDeclarations();
  os << "namespace {\n\nusing namespace tmr::executor;\n";
  if (gpu)
    os << "// Every buffer a kernel reads or writes may have a copy on the GPU.\n"
       << "using View = DeviceView;\n";
  os << "\nconst tmr_tensor_desc kTensors[] = {\n";
  std::vector<std::string> storage = quantizedStorage(plan);
  for (size_t i = 0; i < plan.weights.size(); ++i) {
    const TensorSpec &tensor = plan.weights[i];
    os << "  {" << cxxStringLiteral(tensor.name) << ", " << tensor.shape.size() << ", {";
    llvm::interleaveComma(tensor.shape, os);
    os << "}, " << dtypeEnum(tensor.dtype) << ", " << quantizedEnum(storage[i]) << "},\n";
  }
  os << "};\n\n";
  profileSlots();
  os << "extern const tmr_model_desc kModel;\n\n";
}

void ExecutorWriter::kernelDeclarations() {
  os << "extern \"C\" {\n";
  if (options.trace)
    os << "void tmr_trace_call(int32_t, const float *, int64_t, int64_t);\n";
  for (const KernelDesc &kernel : plan.kernels) {
    if (kernel.kind == KernelKind::linear)
      os << "int tmk_pack_" << kernel.symbol() << suffix
         << "(halide_buffer_t *, halide_buffer_t *);\n";
    if (kernel.kind == KernelKind::linear && kernel.quantized())
      os << "int tmk_pack_" << kernel.symbol() << suffix
         << "_quantized(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *);\n";
    std::vector<BufferShape> signature = kernelSignature(kernel);
    std::vector<std::string> names = {"tmk_" + kernel.symbol() + suffix};
    if (std::string decode = decodeSuffix(kernel); !decode.empty())
      names.push_back(names.front() + decode);
    for (const std::string &name : names) {
      os << "int " << name << "(";
      for (size_t i = 0; i < signature.size(); ++i)
        os << (i ? ", " : "") << (signature[i].isScalar ? "int32_t" : "halide_buffer_t *");
      os << ");\n";
    }
  }
  os << "}\n\n";
}

/// One profile slot per call site (TMR_PROFILE). A multi-ISA executable
/// links one executor per variant; the dispatcher selects the one that runs.
void ExecutorWriter::profileSlots() {
  os << "ProfileSlot profileSlots[] = {\n";
  for (const KernelCall &call : plan.calls)
    os << "  {"
       << cxxStringLiteral(call.kind == KernelCall::Kind::CacheAppend
                               ? "cache_append"
                               : plan.kernels[call.kernel].name())
       << ", " << cxxStringLiteral(call.opName) << ", " << cxxStringLiteral(call.location)
       << ", {}, {}},\n";
  if (plan.calls.empty())
    os << "  {\"\", \"\", \"\", {}, {}},\n";
  os << "};\nProfileTable profile(profileSlots, " << plan.calls.size() << ", "
     << (suffix.empty() ? "true" : "false") << ");\n\n";
}

void ExecutorWriter::run() {
  os << "int run(const tmr_run_args *args, char *err, size_t errLen) {\n";
  prologue();
  if (plan.hasEncode) {
    // The source is encoded once, by the first run of a sequence; later runs
    // read its keys and values from the cross-attention caches.
    os << "  if (P == 0) {\n";
    phase(KernelCall::Phase::Encode);
    os << "  }\n";
  }
  os << "  {\n";
  phase(KernelCall::Phase::Step);
  os << "  }\n  runOutput.finish();\n  return 0;\n}\n\n";
}

/// The checks of the arguments, the output and the prepared weights.
void ExecutorWriter::prologue() {
  os << "  RunSizes sizes;\n"
     << "  if (int rc = checkRun(*args, kModel, &sizes, err, errLen))\n    return rc;\n"
     << "  const int32_t P = sizes.offset;\n";
  if (plan.hasEncode)
    os << "  const int32_t S = sizes.source, SL = sizes.sourceLength;\n";
  os << "  RunOutput runOutput;\n"
     << "  if (int rc = runOutput.open(*args, kModel, err, errLen))\n    return rc;\n"
     << "  float *output = runOutput.data();\n";
  if (!prepared.empty() || gpu)
    os << "  if (int rc = checkPrepared(*args, err, errLen))\n    return rc;\n";
  if (gpu)
    os << "  const DeviceWeights *device = static_cast<const DeviceWeights *>(args->prepared);\n"
       << "  (void)device;\n";
  else if (!prepared.empty())
    os << "  const float *packed = static_cast<const Aligned<float> *>(args->prepared)->data;\n";
  os << "  const bool lastRow = args->last_row_only != 0;\n"
     << "  (void)lastRow;\n"
     << "  tmr_halide_error_clear();\n"
     << "  halide_set_num_threads(args->num_threads > 0 ? args->num_threads : "
     << options.defaultThreads << ");\n";
}

/// The calls of one phase, in a scope that binds T, L, tokens, segments and
/// the arena for it.
void ExecutorWriter::phase(KernelCall::Phase phase) {
  openScope(phase);
  for (const KernelCall &call : plan.calls)
    if (call.phase == phase)
      this->call(call, phase);
}

void ExecutorWriter::openScope(KernelCall::Phase phase) {
  // The encode phase runs over the source; in an encoder-decoder model the
  // segment ids label the source, and the decoder's tokens are segment 0.
  bool encode = phase == KernelCall::Phase::Encode;
  const char *length = encode          ? "SL"
                       : plan.hasEncode ? "P + T"
                                        : "args->length > 0 ? static_cast<int32_t>(args->length) "
                                          ": P + T";
  os << "    const int32_t T = "
     << (encode ? "S" : "static_cast<int32_t>(args->num_tokens)") << ";\n"
     << "    const int32_t L = " << length << ";\n"
     << "    PhaseMemory memory;\n"
     << "    if (int rc = memory.allocate(args->arena, "
     << (encode ? plan.encodeArenaWidth : plan.arenaWidth) << ", T, "
     << (encode ? "args->source_tokens" : "args->tokens") << ", "
     << (encode || !plan.hasEncode ? "args->segments" : "nullptr") << ", err, errLen))\n"
     << "      return rc;\n"
     << "    float *arena = memory.arena;\n"
     << "    int32_t *tokens = memory.tokens, *segments = memory.segments;\n"
     << "    (void)tokens, (void)segments, (void)arena, (void)L;\n";
}

/// One call: its profile timer, then the kernel or the cache append.
void ExecutorWriter::call(const KernelCall &call, KernelCall::Phase phase) {
  os << "    { // " << call.opName << " " << call.location << "\n"
     << "      ProfileTimer timer(profileSlots[" << &call - plan.calls.data() << "], "
     << (phase == KernelCall::Phase::Encode ? "2" : "T == 1 ? 1 : 0") << ");\n";
  if (call.kind == KernelCall::Kind::CacheAppend)
    cacheAppend(call);
  else
    kernelCall(call);
  os << "    }\n";
}

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

void ExecutorWriter::modelDescriptor() {
  const bool needsPrepare = !prepared.empty() || gpu;
  int64_t arenaFloats = std::max(plan.arenaWidth, plan.encodeArenaWidth) * model.maxSeq;
  os << "const tmr_model_desc kModel = {\n"
     << "  TMR_ABI_VERSION, " << cxxStringLiteral(model.name) << ", \"" << outputKind(model)
     << "\", " << model.vocab << ", " << model.maxSeq << ", " << plan.outputWidth << ", "
     << plan.outputRows << ", " << plan.cacheBytes << ", " << model.segments << ", "
     << (plan.hasEncode ? 1 : 0) << ",\n"
     << "  " << plan.weights.size() << ", kTensors, run, "
     << (needsPrepare ? "prepare, release" : "nullptr, nullptr") << ",\n  " << model.dModel << ", "
     << model.layers << ", " << arenaFloats << ", " << prepared.floats << ",\n  "
     << (model.weightScheme.empty() ? std::string("nullptr") : cxxStringLiteral(model.weightScheme))
     << ",\n};\n\n} // namespace\n\n"
     << "extern \"C\" const tmr_model_desc *tmr_compiled_model" << suffix << "(void) {\n"
     << "  profile.select();\n  return &kModel;\n}\n";
  if (suffix.empty())
    os << "\nextern \"C\" const char *tmr_compiled_isa(void) { return "
       << cxxStringLiteral(options.target.isaName()) << "; }\n";
}

} // namespace

std::string cxxStringLiteral(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string generateExecutor(const KernelPlan &plan, const ExecutorOptions &options) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ExecutorWriter(plan, options, os).write();
  return text;
}

} // namespace tmc
