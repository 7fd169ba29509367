//===- tmc.cpp - The tmc command-line tool --------------------------------===//
//
// `tmc COMMAND ...`: each command declares its own options (local cl::opts,
// registered only while it runs) so that `tmc compile --help` lists exactly
// what compile takes.
//
//===----------------------------------------------------------------------===//

#include "compiler/tools/Commands.h"
#include "compiler/Driver.h"
#include "compiler/Error.h"
#include "compiler/InitWeights.h"
#include "compiler/Target.h"
#include "compiler/Toolchain.h"
#include "compiler/TuningDb.h"
#include "frontend/Frontend.h"

#include "llvm/ADT/StringExtras.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"


#include <csignal>
#include <string>
#include <tuple>
#include <vector>

using namespace llvm;
using namespace tmc::tools;

namespace {

struct Command {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
};

int initWeightsCommand(int argc, char **argv) {
  releaseGlobalOptions({"o", "seed", "token-embedding-scale", "gain"});
  cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("MODEL.tm"),
                             cl::cat(toolOptions));
  cl::opt<std::string> output("o", cl::Required, cl::desc("Output safetensors file"),
                              cl::value_desc("W.safetensors"), cl::cat(toolOptions));
  cl::opt<uint64_t> seed("seed", cl::desc("Random seed (default 0)"), cl::init(0),
                         cl::cat(toolOptions));
  cl::opt<std::string> tokenScaleText(
      "token-embedding-scale",
      cl::desc("Multiply the token embedding table by F, in (0, 1000] (default 1); with "
               "--gain, gives a tied-head decoder varied greedy tokens (tests of decoding)"),
      cl::value_desc("F"), cl::init("1"), cl::cat(toolOptions));
  cl::opt<std::string> gainText(
      "gain", cl::desc("Multiply the linear weight matrices by G, in (0, 1000] (default 1)"),
      cl::value_desc("G"), cl::init("1"), cl::cat(toolOptions));
  if (!parseOptions(argc, argv,
                    "tmc init-weights: write deterministic random weights for a model\n"))
    return kExitUsage;
  tmc::InitWeightsOptions options;
  options.seed = seed;
  for (auto [flag, text, value] : {std::tuple{"--token-embedding-scale", &tokenScaleText,
                                              &options.tokenEmbeddingScale},
                                   std::tuple{"--gain", &gainText, &options.gain}}) {
    // A negated range test, so that NaN is refused too; the value is echoed as given.
    double parsed = 0.0;
    if (StringRef(*text).getAsDouble(parsed) || !(parsed > 0.0 && parsed <= 1000.0))
      return tmc::reportError(tmc::makeUsageError(std::string(flag) +
                                                  ": expected a number in (0, 1000], got '" +
                                                  text->getValue() + "'"));
    *value = static_cast<float>(parsed);
  }
  if (Error error = tmc::checkNotAnInput("-o", output, {{"the spec", input}}))
    return tmc::reportError(std::move(error));
  auto loaded = load(input);
  if (!loaded)
    return 1;
  return tmc::reportError(tmc::writeInitialWeights(*loaded->spec, output, options));
}

int compileCommand(int argc, char **argv) {
  releaseGlobalOptions({"o", "emit", "target", "dump-stages-to", "print-ir-after-all", "explain",
                        "threads", "O", "spec", "tuning-db", "precision", "max-batch",
                        "kernel-cache", "jobs"});
  cl::opt<std::string> input(cl::Positional, cl::Required,
                             cl::desc("MODEL.tm, or MODEL.mlir saved by --emit=tm|tm-opt"),
                             cl::cat(toolOptions));
  cl::opt<std::string> specPath("spec",
                                cl::desc("The spec a .mlir input was built from (default: the "
                                         "module's tm.spec attribute)"),
                                cl::value_desc("MODEL.tm"), cl::cat(toolOptions));
  cl::opt<std::string> output("o", cl::desc("Output executable (or stage text; default stdout; "
                                             "--emit=lib: DIR or DIR/NAME)"),
                              cl::value_desc("OUT"), cl::cat(toolOptions));
  cl::opt<std::string> emit("emit", cl::desc("Stop after a stage and write it: ast, tm, "
                                             "tm-opt, kernels, halide, stmt, asm, obj, exe, lib, "
                                             "device (-o DIR: each kernel's PTX, --target cuda)"),
                            cl::value_desc("STAGE"), cl::init("exe"), cl::cat(toolOptions));
  // cl::desc keeps a StringRef: the text must outlive the option (a
  // temporary here was a use-after-free in --help, found by ASan).
  const std::string targetHelp = std::string("Code generation target: ") + tmc::targetNames();
  cl::opt<std::string> target("target", cl::desc(targetHelp), cl::value_desc("T"),
                              cl::init("host"), cl::cat(toolOptions));
  cl::opt<std::string> dumpDir("dump-stages-to", cl::desc("Write every stage's text into DIR"),
                               cl::value_desc("DIR"), cl::cat(toolOptions));
  cl::opt<bool> printAfterAll("print-ir-after-all",
                              cl::desc("Print the tm IR after every pass (to stderr)"),
                              cl::cat(toolOptions));
  cl::opt<bool> explain("explain",
                        cl::desc("Explain the compilation: every fusion made or declined (with "
                                 "its reason) and the kernel every op runs as, as remarks at "
                                 "spec lines"),
                        cl::cat(toolOptions));
  cl::opt<int> threads("threads", cl::desc("Default thread count of the executable (0: all cores)"),
                       cl::init(0), cl::cat(toolOptions));
  cl::opt<std::string> tuningDb("tuning-db",
                                cl::desc("Use the best schedule per kernel from a database "
                                         "written by tmc tune"),
                                cl::value_desc("FILE"), cl::cat(toolOptions));
  cl::opt<int> maxBatch("max-batch",
                        cl::desc("Sequences one run of the executable may carry (its sessions' "
                                 "slots; 1 to 256, default 16)"),
                        cl::value_desc("B"), cl::init(16), cl::cat(toolOptions));
  cl::opt<int> rowBlock("row-block",
                        cl::desc("Run consecutive row-wise kernels in blocks of N token rows, "
                                 "each block through all of them (0: off; default 0)"),
                        cl::value_desc("N"), cl::init(0), cl::cat(toolOptions));
  cl::opt<int> jobs("jobs",
                    cl::desc("Kernel objects compiled at once, each in a process of its own, "
                             "and executors (one per ISA of a multi-ISA target) compiled at "
                             "once (default 0: one per CPU this process may use)"),
                    cl::value_desc("N"), cl::init(0), cl::cat(toolOptions));
  cl::opt<char> optLevel("O", cl::desc("Optimization level 0-3 (-O0: no fusion; default 2)"),
                         cl::Prefix, cl::init('2'), cl::cat(toolOptions));
  PrecisionOption precision;
  KernelCacheOption kernelCache;
  // MLIR's printing, context and pass-manager flags: --mlir-print-debuginfo,
  // --mlir-print-ir-after-all, --mlir-timing and the rest of their family.
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  if (!parseOptions(argc, argv, "tmc compile: compile a model spec into a standalone executable\n"))
    return kExitUsage;

  tmc::CompileOptions options;
  options.input = input;
  options.spec = specPath;
  options.output = output;
  options.target = target;
  options.dumpStagesTo = dumpDir;
  options.printIRAfterAll = printAfterAll;
  options.explain = explain;
  options.tuningDb = tuningDb;
  options.kernelCache = kernelCache.directory();
  std::optional<tmc::Stage> stage = tmc::parseStage(emit);
  if (!stage)
    return tmc::reportError(tmc::makeUsageError("--emit: unknown stage '" + emit.getValue() +
                                                "' (expected one of: " + tmc::stageNames() +
                                                ")"));
  options.emit = *stage;
  if (optLevel < '0' || optLevel > '3')
    return tmc::reportError(tmc::makeUsageError("-O" + Twine(optLevel.getValue()) +
                                                ": the optimization level must be 0 to 3"));
  options.optLevel = static_cast<unsigned>(optLevel - '0');
  if (threads < 0 || threads > 1024)
    return tmc::reportError(tmc::makeUsageError("--threads: " + Twine(threads.getValue()) +
                                                " is out of range [0, 1024]"));
  if (jobs < 0 || jobs > 1024)
    return tmc::reportError(
        tmc::makeUsageError("--jobs: " + Twine(jobs.getValue()) + " is out of range [0, 1024]"));
  options.jobs = jobs;
  if (maxBatch < 1 || maxBatch > 256)
    return tmc::reportError(tmc::makeUsageError("--max-batch: " + Twine(maxBatch.getValue()) +
                                                " is out of range [1, 256]"));
  // Checked here, not minutes into compiling: both are mistakes on the
  // command line, not in the spec.
  Expected<tmc::TargetInfo> targetInfo = tmc::resolveTarget(target);
  if (!targetInfo)
    return tmc::reportError(targetInfo.takeError());
  if (*stage == tmc::Stage::Device && !targetInfo->gpu)
    return tmc::reportError(tmc::makeUsageError(
        "--emit=device writes GPU kernels' PTX: it needs a GPU target (--target cuda or "
        "cuda-sm86), not --target " + target.getValue()));
  if (*stage >= tmc::Stage::Obj && output.empty())
    return tmc::reportError(tmc::makeUsageError(
        *stage == tmc::Stage::Lib      ? "-o DIR (or DIR/NAME) is required to write a library"
        : *stage == tmc::Stage::Device ? "-o DIR is required to write device code"
                                       : "-o OUT is required to write an executable or object"));
  Expected<tmc::SpecOverrides> overrides = precision.overrides();
  if (!overrides)
    return tmc::reportError(overrides.takeError());
  // A saved module's linears were given their precision when it was built.
  if (overrides->precision && tmc::isIRInput(input))
    return tmc::reportError(tmc::makeUsageError(
        "--precision applies to a .tm input; the linears of " + input.getValue() +
        " carry their precision already"));
  if (overrides->kvCache && tmc::isIRInput(input))
    return tmc::reportError(
        tmc::makeUsageError("--kv-cache applies to a .tm input; the caches of " + input.getValue() +
                            " carry their precision already"));
  options.overrides = *overrides;
  options.threads = threads;
  options.maxBatch = maxBatch;
  if (rowBlock < 0 || rowBlock > (1 << 20))
    return tmc::reportError(tmc::makeUsageError("--row-block: " + Twine(rowBlock.getValue()) +
                                                " is out of range [0, 1048576]"));
  options.rowBlock = rowBlock;
  return tmc::runCompile(options);
}

const Command kCommands[] = {
    {"import", "write the spec of a Hugging Face model folder (config.json)", importCommand},
    {"check", "parse and verify a spec; print its size", checkCommand},
    {"manifest", "list the weight tensors a spec expects", manifestCommand},
    {"init-weights", "write deterministic random weights (safetensors)", initWeightsCommand},
    {"quantize", "store a model's reduced-precision linear weights quantized (safetensors)",
     quantizeCommand},
    {"compile", "compile a spec into a standalone executable", compileCommand},
    {"verify", "compare the compiled kernels with the reference, value by value", verifyCommand},
    {"tune", "search kernel schedules by measurement into a tuning database", tuneCommand},
};

void printUsage(raw_ostream &os) {
  os << "usage: tmc COMMAND [options]   (tmc COMMAND --help for its options)\n\n"
        "tmc compiles a transformer described in a .tm spec into a standalone executable.\n\n"
        "commands:\n";
  for (const Command &command : kCommands)
    os << "  " << left_justify(command.name, 14) << command.summary << "\n";
}

/// The standard output's failed writes (--emit to a redirected stdout past a
/// file-size limit, a full disk), as an error; raw_fd_ostream would otherwise
/// report them only at exit, as "LLVM ERROR: IO failure on output stream".
int checkStandardOutput(int status) {
  outs().flush();
  std::error_code error = outs().error();
  if (!error)
    return status;
  outs().clear_error();
  tmc::reportError(tmc::makeError("cannot write the standard output: " + error.message()));
  return status ? status : 1;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // A write past the file-size limit (`ulimit -f`) raises SIGXFSZ, which
  // kills the process (after LLVM's handler has printed a stack dump).
  // Ignored, the write fails with EFBIG and the command reports the file it
  // could not write, in one line. Set after InitLLVM, which installs its
  // handler for the signal; the compiler and linker tmc runs inherit it.
  std::signal(SIGXFSZ, SIG_IGN);
  if (argc < 2) {
    printUsage(errs());
    return kExitUsage;
  }
  StringRef name = argv[1];
  if (name == "--version") {
    outs() << "tmc " << tmc::tmcVersion() << "\n";
    return 0;
  }
  if (name == "--help" || name == "-h" || name == "help") {
    printUsage(outs());
    return 0;
  }
  for (const Command &command : kCommands) {
    if (name != command.name)
      continue;
    std::string program = std::string("tmc ") + command.name;
    std::vector<char *> args = {program.data()};
    args.insert(args.end(), argv + 2, argv + argc);
    return checkStandardOutput(command.run(static_cast<int>(args.size()), args.data()));
  }
  tmc::reportError(tmc::makeUsageError("unknown command '" + name + "'"));
  for (const Command &command : kCommands)
    if (StringRef(command.name).edit_distance(name) <= 2)
      errs() << "tmc: note: did you mean '" << command.name << "'?\n";
  printUsage(errs());
  return kExitUsage;
}
