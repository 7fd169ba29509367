//===- VerifyCommand.cpp - `tmc verify`: a numerical bisect ---------------===//
//
// Compiles the model with an executor that reports every kernel's output,
// runs it once on the user's weights and tokens, evaluates the reference
// (tests/reference, double precision) on the same input, and compares the
// two wherever both name a value: the embedding, each projection, attention
// and feed-forward step, each sublayer's residual stream, the final norm and
// the head. The first value past the tolerance names the kernel that made it
// and the spec line that kernel came from: where to look. With
// --reference-precision=f32 the reference computes every linear in f32, so
// a reduced-precision model's table shows what its precision costs, and the
// value where that error grows most is named: the layer to keep in f32
// (f32 also keeps the reference's key/value caches f32, whatever kv_cache says).
//
// Values are matched by name: a compiled op is named for what it computes
// (frontend/MLIRGen.cpp), a reference tap likewise (Reference.h); when
// several kernels share a name (a projection and its rope, a linear and the
// activation fused or not), the last one holds the value.
//
// Every reference value is accounted for. One that no kernel writes out
// because fusion folded its op into a kernel holding another value (a
// residual add into the norm after it, a projection into the residual add of
// its epilogue) is listed as fused, with that kernel: the kernel-level IR
// names every op a kernel was made of, and -O0 compares it. Any other value
// without a traced match is an error naming it: coverage that shrank (a
// value lost its name, the trace missed a call) must not pass as a smaller
// table. The header says how many values were compared of how many.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver.h"
#include "compiler/Error.h"
#include "compiler/KernelPlan.h"
#include "compiler/Target.h"
#include "compiler/tools/Commands.h"
#include "runtime/trace.h"
#include "reference/Reference.h"
#include "reference/ReferenceWeights.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>

extern char **environ;

using namespace llvm;

namespace tmc::tools {
namespace {

/// One value compared: a reference tap and the kernel call that holds it.
/// A fused value (fusedInto set) has no numbers: `call` is the kernel that
/// computes it inside and writes out `fusedInto` instead.
struct Comparison {
  std::string name;
  size_t call = 0;
  double maxAbs = 0, relative = 0; ///< relative: maxAbs / max |reference|
  std::string shapeError;
  std::string fusedInto;
};

/// A value by name and phase: computed over an encoder-decoder's source
/// (the encode phase, Tap::source) or not.
using ValueKey = std::pair<std::string, bool>;

/// The values folded into a kernel call that writes out another value, each
/// with the value it writes (KernelCall::foldedValues; the first call wins).
std::map<ValueKey, std::string> fusedValues(const KernelPlan &plan) {
  std::map<ValueKey, std::string> fused;
  for (const KernelCall &call : plan.calls)
    for (const std::string &name : call.foldedValues)
      fused.emplace(ValueKey{name, call.phase == KernelCall::Phase::Encode}, call.origin);
  return fused;
}

/// Parses "1,2,3" into ids in [0, vocab), 1 to maxSeq of them: a bad id is a
/// mistake on the command line (exit 2, the flag and the range named, as the
/// compiled executable says it), not a failure of the reference.
Expected<std::vector<int32_t>> parseIds(StringRef flag, StringRef text, int64_t vocab,
                                        int64_t maxSeq) {
  std::vector<int32_t> ids;
  SmallVector<StringRef> parts;
  text.split(parts, ',', -1, /*KeepEmpty=*/false);
  if (parts.empty() || static_cast<int64_t>(parts.size()) > maxSeq)
    return makeUsageError("--" + flag + ": " + Twine(parts.size()) +
                          " tokens given, this model accepts 1 to " + Twine(maxSeq));
  for (auto [pos, part] : llvm::enumerate(parts)) {
    StringRef item = part.trim();
    bool negative = item.starts_with("-");
    StringRef digits = item.drop_front(negative || item.starts_with("+") ? 1 : 0);
    if (digits.empty() || !llvm::all_of(digits, llvm::isDigit))
      return makeUsageError("--" + flag + ": '" + item + "' (position " + Twine(pos) +
                            ") is not an integer token id");
    // A number too large for 64 bits is out of range too, not "not an integer".
    unsigned long long id;
    if (digits.getAsInteger(10, id) || (negative && id != 0) ||
        id >= static_cast<unsigned long long>(vocab))
      return makeUsageError("--" + flag + ": token " + item + " (position " + Twine(pos) +
                            ") is out of range [0, " + Twine(vocab) + ")");
    ids.push_back(static_cast<int32_t>(id));
  }
  return ids;
}

std::string joinIds(const std::vector<int32_t> &ids) {
  std::string text;
  for (int32_t id : ids)
    text += (text.empty() ? "" : ",") + std::to_string(id);
  return text;
}

/// A deterministic default input that touches many embedding rows.
std::vector<int32_t> defaultTokens(const ModelSpec &spec) {
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < std::min<int64_t>(spec.maxSeq, 16); ++i)
    ids.push_back(static_cast<int32_t>((7 * i + 1) % spec.vocab));
  return ids;
}

/// How this machine runs an executable built for `target`: directly, or for
/// a cross target under qemu-user (qemu-<arch> -L /usr/<triple>); a usage
/// error when it cannot.
Expected<std::vector<std::string>> launcherFor(const TargetInfo &target) {
  if (target.crossTriple.empty())
    return std::vector<std::string>{};
  std::string qemu = "qemu-" + target.crossTriple.substr(0, target.crossTriple.find('-'));
  auto program = sys::findProgramByName(qemu);
  if (!program)
    return makeUsageError("--target " + target.name + ": tmc verify runs the model under " +
                          qemu + ", which is not on PATH (Debian: qemu-user)");
  return std::vector<std::string>{*program, "-L", "/usr/" + target.crossTriple};
}

/// Runs the traced executable; on failure, the error holds its status and
/// what it printed.
Error runTraced(const std::vector<std::string> &launcher, const std::string &exe,
                const std::vector<std::string> &args, const std::string &tracePath,
                const std::string &logPath) {
  std::vector<std::string> env;
  for (char **entry = environ; *entry; ++entry)
    if (!StringRef(*entry).starts_with("TMR_TRACE_FILE="))
      env.push_back(*entry);
  env.push_back("TMR_TRACE_FILE=" + tracePath);
  std::vector<StringRef> argv(launcher.begin(), launcher.end()), envRefs(env.begin(), env.end());
  argv.push_back(exe);
  argv.insert(argv.end(), args.begin(), args.end());
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath), StringRef(logPath)};
  std::string message;
  int rc = sys::ExecuteAndWait(argv[0], argv, ArrayRef<StringRef>(envRefs), redirects, 0, 0,
                               &message);
  if (rc == 0)
    return Error::success();
  // What it printed follows the message's line as it printed it (reportError
  // ends the message with the newline).
  std::string printed;
  if (auto log = MemoryBuffer::getFile(logPath))
    printed = (*log)->getBuffer().str();
  if (!printed.empty() && printed.back() == '\n')
    printed.pop_back();
  return makeError("the compiled model failed (status " + Twine(rc) + ")" +
                   (message.empty() ? "" : ": " + message) +
                   (printed.empty() ? "" : "\n" + printed));
}

/// Columns [column, column + width) of every row of `record`.
tmr::TraceRecord columns(const tmr::TraceRecord &record, int64_t column, int64_t width) {
  tmr::TraceRecord part{record.call, record.rows, width, {}};
  part.values.reserve(static_cast<size_t>(record.rows * width));
  for (int64_t row = 0; row < record.rows; ++row) {
    auto begin = record.values.begin() + row * record.width + column;
    part.values.insert(part.values.end(), begin, begin + width);
  }
  return part;
}

/// The records of a run the executable fed in chunks (a model whose caches
/// hold a window's rows: KernelPlan::runChunk), each call's rows joined in
/// the order its chunks ran. Every call of such a model writes one row per
/// token (tmk-window-caches leaves pooling models whole).
std::vector<tmr::TraceRecord> joinChunks(std::vector<tmr::TraceRecord> records) {
  std::vector<tmr::TraceRecord> joined;
  std::map<int32_t, size_t> byCall;
  for (tmr::TraceRecord &record : records) {
    auto [it, first] = byCall.try_emplace(record.call, joined.size());
    if (first) {
      joined.push_back(std::move(record));
      continue;
    }
    tmr::TraceRecord &into = joined[it->second];
    if (into.width != record.width) // not chunks of one call: left apart
      joined.push_back(std::move(record));
    else {
      into.rows += record.rows;
      into.values.insert(into.values.end(), record.values.begin(), record.values.end());
    }
  }
  return joined;
}

Comparison compare(const ref::Tap &tap, size_t call, const tmr::TraceRecord &record) {
  Comparison result{tap.name, call, 0, 0, ""};
  if (record.rows != tap.rows || record.width != tap.cols) {
    result.shapeError = formatv("compiled [{0}, {1}] vs reference [{2}, {3}]", record.rows,
                                record.width, tap.rows, tap.cols)
                            .str();
    return result;
  }
  double scale = 0;
  for (size_t i = 0; i < record.values.size(); ++i) {
    double expected = (*tap.data)[i], actual = record.values[i];
    scale = std::max(scale, std::abs(expected));
    double error = std::abs(actual - expected);
    // NaN compares false with everything: count it as unbounded error.
    result.maxAbs = std::isnan(error) ? INFINITY : std::max(result.maxAbs, error);
  }
  result.relative = result.maxAbs / std::max(scale, 1e-30);
  return result;
}

/// Against a reference in another precision, each value's error is what the
/// model's precision has cost up to it; the largest step up from the value
/// before it (in call order) is where that cost is paid. Said for every
/// kernel (an attention may amplify what its inputs' rounding cost) and, when
/// that is not one, for the reduced-precision kernels alone: the layer to
/// keep in f32 first (`layers A..B { precision = f32 }`).
void printLargestGrowth(const std::vector<Comparison> &results, const KernelPlan &plan,
                        const std::string &referencePrecision) {
  struct Step {
    const Comparison *at = nullptr;
    double before = 0, size = -1;
  };
  Step any, reduced;
  double before = 0;
  for (const Comparison &result : results) {
    if (!result.fusedInto.empty() || !result.shapeError.empty())
      continue;
    const KernelDesc &kernel = plan.kernels[plan.calls[result.call].kernel];
    double size = result.relative - before;
    if (size > any.size)
      any = {&result, before, size};
    // A reduced-precision GEMM, or a tied table's lookup in its head's precision.
    if (kernel.precision != "f32" && size > reduced.size)
      reduced = {&result, before, size};
    before = result.relative;
  }
  auto say = [&](const char *what, const Step &step) {
    const KernelCall &call = plan.calls[step.at->call];
    outs() << what << step.at->name
           << format(" (%.2e after %.2e)", step.at->relative, step.before)
           << ", computed by kernel k" << call.kernel << " ("
           << plan.kernels[call.kernel].name() << ", " << call.opName << ") from "
           << call.location << "\n";
  };
  if (!any.at)
    return;
  outs() << "\nagainst a reference in " << referencePrecision << ":\n";
  say("  the error grows most at ", any);
  if (reduced.at && reduced.at != any.at)
    say("  of the reduced-precision kernels' values, at ", reduced);
}

} // namespace

int verifyCommand(int argc, char **argv) {
  releaseGlobalOptions(
      {"weights", "tokens", "source-tokens", "tolerance", "target", "O", "tuning-db",
       "precision"});
  cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("MODEL.tm"),
                             cl::cat(toolOptions));
  cl::opt<std::string> weightsPath("weights", cl::Required, cl::desc("Weights (safetensors)"),
                                   cl::value_desc("W.safetensors"), cl::cat(toolOptions));
  cl::opt<std::string> tokensText("tokens", cl::desc("Input token ids (default: 16 spread ids)"),
                                  cl::value_desc("1,2,3"), cl::cat(toolOptions));
  cl::opt<std::string> sourceText("source-tokens",
                                  cl::desc("Encoder-decoder: the source (default as --tokens)"),
                                  cl::value_desc("1,2,3"), cl::cat(toolOptions));
  // Text, not cl::opt<double>: a message then shows the value as given.
  cl::opt<std::string> toleranceText("tolerance",
                                     cl::desc("Largest allowed max|compiled - reference| / "
                                              "max|reference| per value (default 1e-4)"),
                                     cl::value_desc("T"), cl::init("1e-4"),
                                     cl::cat(toolOptions));
  cl::opt<std::string> tuningDb("tuning-db",
                                cl::desc("Compile with the schedules of a tmc tune database"),
                                cl::value_desc("FILE"), cl::cat(toolOptions));
  cl::opt<std::string> target("target", cl::desc("Code generation target (default host)"),
                              cl::init("host"), cl::cat(toolOptions));
  cl::opt<char> optLevel("O",
                         cl::desc("Optimization level 0-3 as in tmc compile (-O0: every op "
                                  "its own kernel, so every value is compared)"),
                         cl::Prefix, cl::init('2'), cl::cat(toolOptions));
  PrecisionOption precision;
  KernelCacheOption kernelCache;
  cl::opt<std::string> referencePrecision(
      "reference-precision",
      cl::desc("Evaluate the reference with every linear in this precision (f32, bf16, int8 or "
               "q4; usually f32, which also keeps the key/value caches f32) instead of the "
               "model's own: the table then shows what reduced precision costs, value by value, "
               "and names where the error grows most"),
      cl::value_desc("f32|bf16|int8|q4"), cl::cat(toolOptions));
  // The compile underneath applies MLIR's pass-manager options, so they must exist.
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  if (!parseOptions(argc, argv,
                    "tmc verify: run the compiled kernels and the reference evaluator side by "
                    "side\nand name the first kernel whose output strays past the tolerance\n"))
    return kExitUsage;
  double tolerance = 0;
  if (StringRef(toleranceText).trim().getAsDouble(tolerance) || !std::isfinite(tolerance))
    return reportError(makeUsageError("--tolerance: '" + toleranceText +
                                      "' is not a finite number"));
  if (!(tolerance > 0))
    return reportError(makeUsageError("--tolerance: " + toleranceText +
                                      " is out of range: it must be a number > 0"));
  if (optLevel < '0' || optLevel > '3')
    return reportError(makeUsageError("-O" + Twine(optLevel.getValue()) +
                                      ": the optimization level must be 0 to 3"));
  Expected<TargetInfo> resolved = resolveTarget(target);
  if (!resolved)
    return reportError(resolved.takeError());
  Expected<std::vector<std::string>> launcher = launcherFor(*resolved);
  if (!launcher)
    return reportError(launcher.takeError());
  Expected<SpecOverrides> overrides = precision.overrides();
  if (!overrides)
    return reportError(overrides.takeError());
  auto loaded = load(input, *overrides);
  if (!loaded)
    return 1;
  const ModelSpec &spec = *loaded->spec;
  // The reference's spec: the model's, or with every linear in one precision.
  ModelSpec referenceSpec = spec;
  if (referencePrecision.getNumOccurrences()) {
    std::optional<Precision> chosen = parsePrecision(referencePrecision);
    if (!chosen)
      return reportError(makeUsageError("--reference-precision: unknown precision '" +
                                        referencePrecision + "' (expected one of: " +
                                        allowedPrecisions() + ")"));
    referenceSpec.precision = *chosen;
    // f32 is the whole unreduced model: its key/value caches too.
    bool unreduced = *chosen == Precision::F32;
    if (unreduced)
      referenceSpec.kvCache = CachePrecision::F32;
    for (StackSpec *stack : {&referenceSpec.encoder, &referenceSpec.decoder}) {
      stack->precision = *chosen;
      if (unreduced)
        stack->kvCache = CachePrecision::F32;
      for (LayerSpec &layer : stack->layerSpecs) {
        layer.precision = *chosen;
        if (unreduced)
          layer.kvCache = CachePrecision::F32;
      }
    }
  }

  ref::Inputs inputs;
  inputs.tokens = defaultTokens(spec);
  if (!tokensText.empty()) {
    Expected<std::vector<int32_t>> ids = parseIds("tokens", tokensText, spec.vocab, spec.maxSeq);
    if (!ids)
      return reportError(ids.takeError());
    inputs.tokens = std::move(*ids);
  }
  if (spec.isEncoderDecoder()) {
    inputs.sourceTokens = inputs.tokens;
    if (!sourceText.empty()) {
      Expected<std::vector<int32_t>> ids =
          parseIds("source-tokens", sourceText, spec.vocab, spec.maxSeq);
      if (!ids)
        return reportError(ids.takeError());
      inputs.sourceTokens = std::move(*ids);
    }
  }
  // The reference and the trace reader (outside compiler/) say why in a string.
  std::string error;
  auto weights = ref::ReferenceWeights::open(spec, weightsPath, &error);
  if (!weights)
    return reportError(makeError(error));

  // The reference first: it also range-checks the input for both sides.
  std::vector<ref::Tap> taps;
  std::vector<std::vector<double>> tapData;
  tapData.reserve(4096);
  auto observe = [&](const ref::Tap &tap) {
    tapData.push_back(*tap.data);
    taps.push_back(tap);
  };
  if (!ref::evaluate(referenceSpec, weights->lookup(), inputs, &error, observe))
    return reportError(makeError(error));
  for (size_t i = 0; i < taps.size(); ++i)
    taps[i].data = &tapData[i];

  SmallString<128> workDir;
  if (std::error_code ec = sys::fs::createUniqueDirectory("tmc-verify", workDir))
    return reportError(makeError("cannot create a temporary directory: " + ec.message()));
  struct Cleanup {
    std::string dir;
    ~Cleanup() { sys::fs::remove_directories(dir); }
  } cleanup{std::string(workDir)};
  std::string dir(workDir);

  CompileOptions options;
  options.input = input;
  options.output = dir + "/model";
  // Host's variant this machine runs alone (`native`): the executable runs
  // here, and the other variants never would.
  options.target = target == "host" ? "native" : std::string(target);
  options.trace = true;
  options.tuningDb = tuningDb;
  options.kernelCache = kernelCache.directory();
  options.overrides = *overrides;
  options.optLevel = static_cast<unsigned>(optLevel - '0');
  KernelPlan plan;
  if (int rc = runCompile(options, &plan))
    return rc;
  std::vector<std::string> args = {"--weights", weightsPath, "--tokens", joinIds(inputs.tokens)};
  if (spec.isEncoderDecoder())
    args.insert(args.end(), {"--source-tokens", joinIds(inputs.sourceTokens)});
  if (Error failure =
          runTraced(*launcher, options.output, args, dir + "/trace.bin", dir + "/log.txt"))
    return reportError(std::move(failure));
  std::vector<tmr::TraceRecord> records;
  if (!tmr::readTrace(dir + "/trace.bin", &records, &error))
    return reportError(makeError(error));
  if (plan.runChunk > 0 && static_cast<int64_t>(inputs.tokens.size()) > plan.runChunk)
    records = joinChunks(std::move(records));
  std::map<ValueKey, std::string> fused = fusedValues(plan);

  // A fused projection's call holds several values side by side (q, k, v):
  // each column range is a record of its own, named as the value it holds.
  std::vector<std::pair<std::string, tmr::TraceRecord>> named;
  for (const tmr::TraceRecord &record : records) {
    if (record.call < 0 || static_cast<size_t>(record.call) >= plan.calls.size())
      continue;
    const KernelCall &call = plan.calls[record.call];
    named.push_back({call.origin, record});
    for (const ResultPart &part : call.parts)
      named.push_back({part.origin, columns(record, part.column, part.width)});
  }
  // The last traced value of a name and phase.
  auto lastTraced = [&](const std::string &name, bool source) {
    const tmr::TraceRecord *match = nullptr;
    for (const auto &[origin, record] : named) {
      const KernelCall &call = plan.calls[record.call];
      bool encodePhase = call.phase == KernelCall::Phase::Encode;
      bool sameName =
          origin == name || (name == "embed" && StringRef(origin).starts_with("embed"));
      if (sameName && encodePhase == source)
        match = &record;
    }
    return match;
  };
  // Each tap: compared with its traced value, else fused into a traced
  // kernel, else missing.
  std::vector<Comparison> results;
  std::vector<std::string> missing;
  size_t compared = 0;
  for (const ref::Tap &tap : taps) {
    if (const tmr::TraceRecord *match = lastTraced(tap.name, tap.source)) {
      results.push_back(compare(tap, static_cast<size_t>(match->call), *match));
      ++compared;
      continue;
    }
    auto into = fused.find({tap.name, tap.source});
    const tmr::TraceRecord *holder =
        into == fused.end() ? nullptr : lastTraced(into->second, tap.source);
    if (holder) {
      Comparison result{tap.name, static_cast<size_t>(holder->call), 0, 0, "", into->second};
      results.push_back(result);
      continue;
    }
    missing.push_back(tap.name + (tap.source ? " (over the source)" : ""));
  }
  size_t fusedCount = results.size() - compared;
  std::stable_sort(results.begin(), results.end(),
                   [](const Comparison &a, const Comparison &b) { return a.call < b.call; });

  outs() << "tmc verify: " << input << " on " << inputs.tokens.size() << " tokens; " << compared
         << " of " << taps.size() << " reference values compared";
  if (fusedCount)
    outs() << ", " << fusedCount << " fused inside kernels";
  if (!missing.empty())
    outs() << ", " << missing.size() << " with no traced value";
  outs() << "; " << records.size() << " kernel calls traced\n"
         << "error = max |compiled - reference| / max |reference|, tolerance "
         << format("%.1e", tolerance) << "\n\n";
  outs() << left_justify("value", 40) << left_justify("kernel", 44) << right_justify("max abs", 10)
         << right_justify("error", 10) << "\n";
  const Comparison *first = nullptr;
  for (const Comparison &result : results) {
    const KernelCall &call = plan.calls[result.call];
    std::string kernel = formatv("k{0} {1}", call.kernel, plan.kernels[call.kernel].name());
    if (!result.fusedInto.empty()) {
      outs() << left_justify(result.name, 40) << left_justify(kernel, 44)
             << "  fused: not written out (the kernel writes "
             << result.fusedInto << ")\n";
      continue;
    }
    bool bad = !result.shapeError.empty() || !(result.relative <= tolerance);
    if (bad && !first)
      first = &result;
    outs() << left_justify(result.name, 40) << left_justify(kernel, 44);
    if (!result.shapeError.empty())
      outs() << "  shape mismatch: " << result.shapeError;
    else
      outs() << format("%10.2e%10.2e", result.maxAbs, result.relative);
    outs() << (bad ? "  <-- exceeds" : "") << "\n";
  }
  if (referencePrecision.getNumOccurrences())
    printLargestGrowth(results, plan, referencePrecision);
  if (!first && missing.empty()) {
    outs() << "\nall " << compared << " values within tolerance";
    if (fusedCount)
      outs() << "; " << fusedCount << " fused values not compared (-O0 compares them)";
    outs() << "\n";
    return 0;
  }
  if (first) {
    const KernelCall &call = plan.calls[first->call];
    outs() << "\nfirst divergence: " << first->name << ", computed by kernel k" << call.kernel
           << " (" << plan.kernels[call.kernel].name() << ", " << call.opName << ") from "
           << call.location << "\n";
  }
  if (!missing.empty()) {
    outs().flush();
    return reportError(makeError(
        Twine(missing.size()) + " of " + Twine(taps.size()) +
        " reference values have no traced value in the compiled model, so nothing compared "
        "them (no kernel call is named for them, nor fused from them): " +
        join(missing, ", ")));
  }
  return 1;
}

} // namespace tmc::tools
