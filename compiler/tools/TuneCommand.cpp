//===- TuneCommand.cpp - `tmc tune` ----------------------------------------===//
//
// tmc tune MODEL.tm --db FILE [--target T] [--budget 10m] [--resume]
//          [--threads N] [--tokens T] [--timeout S] [--seed N] [--max-trials N]
// tmc tune MODEL.tm --db FILE --report [--svg FILE]
//
//===----------------------------------------------------------------------===//

#include "compiler/Error.h"
#include "compiler/Target.h"
#include "compiler/Toolchain.h"
#include "compiler/tools/Commands.h"
#include "compiler/tune/Tuner.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include <cstdlib>

using namespace llvm;

namespace tmc::tools {

namespace {

/// "90", "90s", "10m", "1h", "1.5m": seconds; false when malformed.
bool parseDuration(const std::string &text, double *seconds) {
  if (text.empty())
    return false;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  std::string unit(end);
  double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : 0;
  if (end == text.c_str() || scale == 0 || !(value > 0))
    return false;
  *seconds = value * scale;
  return true;
}

} // namespace

int tuneCommand(int argc, char **argv) {
  releaseGlobalOptions({"target", "db", "budget", "resume", "threads", "tokens", "timeout", "seed",
                        "max-trials", "report", "svg", "precision", "kernel-cache"});
  cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("MODEL.tm"),
                             cl::cat(toolOptions));
  cl::opt<std::string> db("db", cl::Required,
                          cl::desc("The tuning database (JSON lines; created if missing)"),
                          cl::value_desc("FILE"), cl::cat(toolOptions));
  const std::string targetHelp = std::string("Code generation target: ") + tmc::targetNames();
  cl::opt<std::string> target("target", cl::desc(targetHelp), cl::value_desc("T"),
                              cl::init("host"), cl::cat(toolOptions));
  cl::opt<std::string> budget("budget",
                              cl::desc("Time for the whole run, profile included: 90s, 10m, 1h "
                                       "(default 10m)"),
                              cl::value_desc("DURATION"), cl::init("10m"), cl::cat(toolOptions));
  cl::opt<bool> resume("resume", cl::desc("Continue from the database's entries for this model"),
                       cl::cat(toolOptions));
  cl::opt<int> threads("threads", cl::desc("Threads the kernels are timed with (default 2)"),
                       cl::init(2), cl::cat(toolOptions));
  cl::opt<int> tokens("tokens", cl::desc("Tokens of the prefill measurement (default 128, at "
                                         "most max_seq)"),
                      cl::init(128), cl::cat(toolOptions));
  // Text, not cl::opt<double>: a message then shows the value as given.
  cl::opt<std::string> timeoutText("timeout",
                                   cl::desc("Seconds a candidate may run before it is killed "
                                            "(default 20)"),
                                   cl::value_desc("S"), cl::init("20"), cl::cat(toolOptions));
  cl::opt<unsigned> seed("seed", cl::desc("Seed of the search (default 1)"), cl::init(1),
                         cl::cat(toolOptions));
  cl::opt<int> maxTrials("max-trials",
                         cl::desc("Candidates measured per kernel in this run (default 0: as "
                                  "many as the budget allows)"),
                         cl::value_desc("N"), cl::init(0), cl::cat(toolOptions));
  cl::opt<bool> report("report", cl::desc("Print the database's table for this model and write "
                                          "the chart; tunes nothing"),
                       cl::cat(toolOptions));
  cl::opt<std::string> svg("svg", cl::desc("--report: where the chart goes (default FILE.svg)"),
                           cl::value_desc("SVG"), cl::cat(toolOptions));
  PrecisionOption precision;
  KernelCacheOption kernelCache;
  // runCompile (which forms the kernel plan) applies MLIR's pass-manager
  // options; they must exist even when none is given.
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  if (!parseOptions(argc, argv,
                    "tmc tune: search kernel schedules by measurement; keep the best in a "
                    "database for tmc compile --tuning-db\n"))
    return kExitUsage;

  tune::TuneOptions options;
  options.spec = input;
  options.db = db;
  options.target = target;
  options.resume = resume;
  options.svg = svg;
  if (!parseDuration(budget, &options.budgetSeconds) || options.budgetSeconds > 7 * 24 * 3600)
    return reportError(makeUsageError("--budget: '" + budget.getValue() +
                                      "' is not a duration in (0, 7 days] (e.g. 90s, 10m, 1h)"));
  if (threads < 1 || threads > 1024)
    return reportError(makeUsageError("--threads: " + Twine(threads.getValue()) +
                                      " is out of range [1, 1024]"));
  if (tokens < 1 || tokens > 65536)
    return reportError(makeUsageError("--tokens: " + Twine(tokens.getValue()) +
                                      " is out of range [1, 65536]"));
  double timeout = 0;
  if (StringRef(timeoutText).trim().getAsDouble(timeout))
    return reportError(makeUsageError("--timeout: '" + timeoutText + "' is not a number"));
  // A negated range test, so that NaN is refused too.
  if (!(timeout >= 1 && timeout <= 3600))
    return reportError(makeUsageError("--timeout: " + timeoutText +
                                      " is out of range [1, 3600] seconds"));
  if (maxTrials < 0 || maxTrials > 1000000)
    return reportError(makeUsageError("--max-trials: " + Twine(maxTrials.getValue()) +
                                      " is out of range [0, 1000000]"));
  if (!svg.empty() && !report)
    return reportError(makeUsageError("--svg is only meaningful with --report"));
  if (Expected<TargetInfo> resolved = resolveTarget(target); !resolved)
    return reportError(resolved.takeError());
  Expected<SpecOverrides> overrides = precision.overrides();
  if (!overrides)
    return reportError(overrides.takeError());
  options.overrides = *overrides;
  // The database is read and rewritten by design; neither it nor the chart
  // may be the spec, nor the chart the database.
  std::vector<tmr::InputFile> inputs = {{"the spec", input}};
  if (Error error = checkNotAnInput("--db", db, inputs))
    return reportError(std::move(error));
  inputs.push_back({"the tuning database", db});
  if (report)
    if (Error error =
            checkNotAnInput(svg.empty() ? "the chart" : "--svg", options.chartPath(), inputs))
      return reportError(std::move(error));
  options.threads = threads;
  options.tokens = tokens;
  options.timeoutSeconds = timeout;
  options.seed = seed;
  options.kernelCache = kernelCache.directory();
  options.maxTrials = maxTrials;
  return report ? tune::runReport(options) : tune::runTune(options);
}

} // namespace tmc::tools
