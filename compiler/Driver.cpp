//===- Driver.cpp - The stages of `tmc compile` ---------------------------===//
//
// spec -> AST -> tm (MLIRGen) -> tm-opt (pass pipeline) -> kernels (tmk passes, plan)
//      -> halide (lowering + schedules) -> stmt/asm/obj (Halide AOT)
//      -> exe (generated executor + runtime, linked by the system compiler).
// Each stage's text can be emitted alone (--emit) or all dumped (--dump-stages-to).
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver.h"

#include "compiler/ExecutorGen.h"
#include "compiler/KernelCompiler.h"
#include "compiler/KernelPlan.h"
#include "compiler/Target.h"
#include "compiler/Toolchain.h"
#include "compiler/tune/TuningDb.h"
#include "dialects/tm/Passes.h"
#include "dialects/tmk/Passes.h"
#include "frontend/Frontend.h"
#include "frontend/MLIRGen.h"
#include "frontend/Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <array>

namespace tmc {

namespace {

constexpr std::array<const char *, 11> kStageNames = {
    "ast", "tm", "tm-opt", "kernels", "halide", "stmt", "asm", "obj", "exe", "lib", "device"};

bool isIRInput(llvm::StringRef path) { return path.ends_with(".mlir"); }

/// Parses a module written by an earlier stage (`--emit=tm`, `--emit=tm-opt`,
/// `--dump-stages-to`, or edited by hand) and the spec it was built from: the
/// executor needs the spec's inputs and manifest. `specOverride` (--spec)
/// names the spec when the module's `tm.spec` attribute is absent or stale.
mlir::OwningOpRef<mlir::ModuleOp> loadModule(mlir::MLIRContext &context, const std::string &path,
                                             const std::string &specOverride,
                                             llvm::SourceMgr &sourceMgr, LoadedSpec *loaded) {
  context.getOrLoadDialect<tm::TMDialect>();
  context.getOrLoadDialect<tmk::TMKDialect>();
  context.getOrLoadDialect<mlir::func::FuncDialect>();
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> buffer = mlir::openInputFile(path, &error);
  if (!buffer) {
    llvm::errs() << "tmc: error: " << error << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return nullptr;
  std::string specPath = specOverride;
  if (specPath.empty()) {
    auto attr = (*module)->getAttrOfType<mlir::StringAttr>(kSpecAttrName);
    if (!attr) {
      llvm::errs() << "tmc: error: " << path << ": the module has no '" << kSpecAttrName
                   << "' attribute naming the spec it was built from; pass --spec MODEL.tm\n";
      return nullptr;
    }
    specPath = attr.getValue().str();
  }
  *loaded = loadSpec(specPath, llvm::errs());
  if (!loaded->ok()) {
    llvm::errs() << "tmc: error: " << path << ": cannot load its spec '" << specPath
                 << "' (pass --spec MODEL.tm to name another)\n";
    return nullptr;
  }
  return module;
}

class CompileJob {
public:
  CompileJob(const CompileOptions &options, KernelPlan *planOut)
      : options(options), planOut(planOut) {}

  ~CompileJob() {
    if (!workDir.empty())
      llvm::sys::fs::remove_directories(workDir);
  }

  int run();

private:
  /// Records a stage's text; true when the pipeline should stop here.
  bool finishStage(Stage stage, const std::string &text, const char *dumpName);
  /// Writes `text` into the --dump-stages-to directory, if one was given.
  bool dumpText(const std::string &text, const char *dumpName);
  bool fail(const std::string &message) {
    llvm::errs() << "tmc: error: " << message << "\n";
    return false;
  }
  bool makeWorkDir();
  /// --tuning-db: the database's schedules into `plan`, and what was found said.
  bool applyTuningDb(KernelPlan &plan, const TargetInfo &target);
  /// `--emit=lib`: libNAME.a and NAME.h.
  bool writeLibrary(const std::vector<std::string> &objects, const KernelPlan &plan,
                    const ModelSpec &spec, const ExecutorOptions &executorOptions);
  /// `--emit=device`: DIR/<kernel>.ptx for every kernel with GPU code.
  bool writeDeviceCode(const KernelBuildResult &kernels);
  bool wants(Stage stage) const { return options.emit == stage || dumping(); }
  bool dumping() const { return !options.dumpStagesTo.empty(); }

  const CompileOptions &options;
  KernelPlan *planOut;
  std::string workDir;
  bool failed = false;
};

bool CompileJob::dumpText(const std::string &text, const char *dumpName) {
  if (!dumping() || !dumpName)
    return true;
  std::string error;
  llvm::SmallString<256> path(options.dumpStagesTo);
  llvm::sys::path::append(path, dumpName);
  if (writeFileAtomically(std::string(path), text, &error))
    return true;
  failed = true;
  return fail(error);
}

bool CompileJob::finishStage(Stage stage, const std::string &text, const char *dumpName) {
  if (!dumpText(text, dumpName))
    return true;
  if (options.emit != stage)
    return false;
  if (options.output.empty() || options.output == "-") {
    llvm::outs() << text;
  } else {
    std::string error;
    if (!writeFileAtomically(options.output, text, &error))
      failed = !fail(error);
  }
  return true;
}

bool CompileJob::makeWorkDir() {
  llvm::SmallString<256> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("tmc", dir))
    return fail("cannot create a temporary directory: " + ec.message());
  workDir = std::string(dir);
  return true;
}

bool CompileJob::writeLibrary(const std::vector<std::string> &objects, const KernelPlan &plan,
                              const ModelSpec &spec, const ExecutorOptions &executorOptions) {
  // -o DIR names the library after the model; -o DIR/NAME (or DIR/libNAME.a) chooses.
  std::string dir = options.output, name = spec.name;
  if (!llvm::sys::fs::is_directory(options.output)) {
    dir = llvm::sys::path::parent_path(options.output).str();
    name = llvm::sys::path::filename(options.output).str();
    llvm::StringRef stem(name);
    if (stem.consume_back(".a"))
      stem.consume_front("lib");
    name = stem.str();
    if (name.empty())
      return fail("-o " + options.output + ": no library name");
  }
  llvm::SmallString<256> archive(dir), header(dir);
  llvm::sys::path::append(archive, "lib" + name + ".a");
  llvm::sys::path::append(header, name + ".h");
  std::string runtimeHeader, error;
  if (!readRuntimeHeader(&runtimeHeader, &error))
    return fail(error);
  std::string headerText =
      generateLibraryHeader(plan, spec, name, runtimeHeader, executorOptions);
  // The archive first: a header without its library is the worse half.
  if (!archiveLibrary(objects, std::string(archive), workDir, &error, &executorOptions.target) ||
      !writeFileAtomically(std::string(header), headerText, &error)) {
    llvm::sys::fs::remove(archive);
    return fail(error);
  }
  return true;
}

bool CompileJob::writeDeviceCode(const KernelBuildResult &kernels) {
  if (std::error_code ec = llvm::sys::fs::create_directories(options.output))
    return fail("-o " + options.output + ": cannot create the directory: " + ec.message());
  for (const auto &[kernel, code] : kernels.deviceCode) {
    llvm::SmallString<256> path(options.output);
    llvm::sys::path::append(path, kernel + ".ptx");
    std::string error;
    if (!writeFileAtomically(std::string(path), code, &error))
      return fail(error);
  }
  return true;
}

bool CompileJob::applyTuningDb(KernelPlan &plan, const TargetInfo &target) {
  tune::TuningDb db;
  std::string error;
  if (!tune::loadTuningDb(options.tuningDb, &db, &error))
    return fail("--tuning-db: " + error);
  std::vector<std::string> warnings, found, atDefault;
  plan.schedules = tune::selectSchedules(db, plan, target, &warnings, &found, &atDefault);
  for (const std::string &warning : warnings)
    llvm::errs() << "tmc: warning: " << options.tuningDb << ": " << warning << "\n";
  llvm::errs() << "tmc: " << options.tuningDb << ": tuned schedules for " << found.size()
               << " of " << plan.kernels.size() << " kernels";
  for (size_t i = 0; i < found.size(); ++i)
    llvm::errs() << (i ? ", " : ": ") << found[i];
  if (!atDefault.empty())
    llvm::errs() << "; " << atDefault.size() << " more tuned and kept their default";
  llvm::errs() << "\n";
  if (planOut)
    planOut->schedules = plan.schedules;
  return true;
}

int CompileJob::run() {
  if (dumping())
    if (std::error_code ec = llvm::sys::fs::create_directories(options.dumpStagesTo))
      return fail("--dump-stages-to: cannot create '" + options.dumpStagesTo +
                  "': " + ec.message()), 1;
  if (options.emit >= Stage::Obj && options.output.empty())
    return fail(options.emit == Stage::Lib      ? "-o DIR (or DIR/NAME) is required to write a library"
                : options.emit == Stage::Device ? "-o DIR is required to write device code"
                                                : "-o OUT is required to write an executable or object"), 2;
  // Say so before minutes of compiling, not after, if the output cannot land.
  if (!options.output.empty() && options.output != "-") {
    llvm::StringRef parent = llvm::sys::path::parent_path(options.output);
    bool libraryDir = (options.emit == Stage::Lib || options.emit == Stage::Device) &&
                      llvm::sys::fs::is_directory(options.output);
    if (!libraryDir && !parent.empty() && !llvm::sys::fs::is_directory(parent))
      return fail("-o " + options.output + ": the directory '" + parent.str() +
                  "' does not exist"), 1;
    if (!libraryDir && llvm::sys::fs::is_directory(options.output))
      return fail("-o " + options.output + ": is a directory"), 1;
  }

  // Stages: ast and tm, or (for a .mlir input) the module to resume from.
  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  LoadedSpec loaded;
  llvm::SourceMgr irSourceMgr;
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> diagnostics;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (isIRInput(options.input)) {
    if (options.emit == Stage::AST)
      return fail("--emit=ast needs a .tm input; " + options.input + " is already IR"), 1;
    // The handler opens the spec files that locations name, so errors in
    // the module still show the spec line they came from.
    diagnostics = std::make_unique<mlir::SourceMgrDiagnosticHandler>(irSourceMgr, &context,
                                                                      llvm::errs());
    module = loadModule(context, options.input, options.spec, irSourceMgr, &loaded);
    if (!module)
      return 1;
  } else {
    loaded = loadSpec(options.input, llvm::errs());
    if (!loaded.ok())
      return 1;
    std::string text;
    llvm::raw_string_ostream os(text);
    dumpAST(*loaded.ast, *loaded.sourceMgr, os);
    if (finishStage(Stage::AST, text, "1-ast.txt"))
      return failed;
    // Diagnostics from here on carry spec locations, so the handler prints
    // them with the spec's source line.
    diagnostics = std::make_unique<mlir::SourceMgrDiagnosticHandler>(*loaded.sourceMgr,
                                                                      &context, llvm::errs());
    module = buildModule(context, *loaded.sourceMgr, *loaded.spec);
    if (!module)
      return 1;
  }
  const ModelSpec &spec = *loaded.spec;
  // Dumps always carry the spec locations; --emit shows them with MLIR's
  // own --mlir-print-debuginfo, like mlir-opt.
  auto printModule = [&](bool locations) {
    std::string text;
    llvm::raw_string_ostream os(text);
    mlir::OpPrintingFlags flags;
    if (locations)
      flags.enableDebugInfo(true, /*prettyForm=*/false);
    module->print(os, flags);
    return text;
  };
  auto finishIR = [&](Stage stage, const char *dumpName) {
    if (!dumpText(printModule(true), dumpName))
      return true;
    return options.emit == stage && finishStage(stage, printModule(false), nullptr);
  };
  if (finishIR(Stage::TM, "2-tm.mlir"))
    return failed;

  // Stage: tm-opt.
  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
  // MLIR's own pass-manager flags (--mlir-print-ir-after-all, --mlir-timing,
  // ...), registered by the tmc tool, apply here.
  if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
    return fail("invalid MLIR pass-manager options"), 1;
  auto timing = std::make_unique<mlir::DefaultTimingManager>();
  mlir::applyDefaultTimingManagerCLOptions(*timing);
  if (timing->isEnabled())
    pm.enableTiming(std::move(timing));
  if (options.printIRAfterAll) {
    context.disableMultithreading();
    pm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                        [](mlir::Pass *, mlir::Operation *) { return true; },
                        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  }
  tm::buildOptimizationPipeline(pm, {options.optLevel, options.explain});
  if (mlir::failed(pm.run(*module)))
    return 1;
  if (finishIR(Stage::TMOpt, "3-tm-opt.mlir"))
    return failed;

  // Stage: kernels (tmk): one call per kernel, shared kernels, decode
  // variants, arena offsets; then read into the plan.
  mlir::PassManager kernelPm(&context, mlir::ModuleOp::getOperationName());
  if (mlir::failed(mlir::applyPassManagerCLOptions(kernelPm)))
    return fail("invalid MLIR pass-manager options"), 1;
  if (options.printIRAfterAll)
    kernelPm.enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                              [](mlir::Pass *, mlir::Operation *) { return true; },
                              /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  tmk::buildKernelPipeline(kernelPm, options.explain);
  if (mlir::failed(kernelPm.run(*module)))
    return 1;
  std::vector<TensorSpec> manifest = buildManifest(spec);
  std::vector<std::string> names;
  for (const TensorSpec &tensor : manifest)
    names.push_back(tensor.name);
  mlir::FailureOr<KernelPlan> plan = formKernels(*module, names, options.explain);
  if (mlir::failed(plan))
    return 1;
  if (planOut)
    *planOut = *plan;
  {
    // The tmk module (it parses again), then the plan it reads as, commented.
    std::string listing;
    llvm::raw_string_ostream os(listing);
    printKernelPlan(*plan, os);
    std::string comment = "\n// The kernel plan this module reads as:\n";
    for (llvm::StringRef line : llvm::split(llvm::StringRef(listing).rtrim('\n'), '\n'))
      comment += line.empty() ? "//\n"
                 : line.starts_with("//") ? line.str() + "\n"
                                          : "// " + line.str() + "\n";
    if (!dumpText(printModule(true) + comment, "4-kernels.mlir"))
      return 1;
    if (options.emit == Stage::Kernels &&
        finishStage(Stage::Kernels, printModule(false) + comment, nullptr))
      return failed;
  }

  // Stages: halide, stmt, asm.
  std::string error;
  std::optional<TargetInfo> target = resolveTarget(options.target, &error);
  if (!target)
    return fail(error), 1;
  if (options.emit == Stage::Device && !target->gpu)
    return fail("--emit=device writes GPU kernels' PTX: it needs a GPU target (--target cuda "
                "or cuda-sm86), not --target " + options.target), 2;
  if (!options.tuningDb.empty() && !applyTuningDb(*plan, *target))
    return 1;
  KernelBuildRequest request;
  request.compileObjects = options.emit > Stage::Halide || dumping();
  request.wantStmt = wants(Stage::Stmt);
  request.wantAssembly = wants(Stage::Asm);
  request.wantDevice = options.emit == Stage::Device;
  if (request.compileObjects && !makeWorkDir())
    return 1;
  request.workDir = workDir;
  KernelBuildResult kernels;
  if (!buildKernels(*plan, *target, request, &kernels, &error))
    return fail(error), 1;
  if (finishStage(Stage::Halide, kernels.halideText, "5-halide.txt"))
    return failed;
  if (request.wantStmt && finishStage(Stage::Stmt, kernels.stmtText, "6-stmt.txt"))
    return failed;
  if (request.wantAssembly && finishStage(Stage::Asm, kernels.assemblyText, "7-asm.s"))
    return failed;
  if (options.emit == Stage::Device)
    return writeDeviceCode(kernels) ? 0 : 1;

  // Stages: obj, exe. A multi-ISA target has one executor per variant (each
  // packs weights into its own kernels' layout) and a dispatcher between them.
  ExecutorOptions executorOptions{options.input, options.threads, *target, options.trace};
  std::vector<std::pair<std::string, std::string>> sources; // name, text
  if (target->variants.empty()) {
    sources.emplace_back("executor", generateExecutor(*plan, spec, manifest, executorOptions));
  } else {
    for (const TargetInfo &variant : target->variants) {
      ExecutorOptions variantOptions = executorOptions;
      variantOptions.target = variant;
      variantOptions.variantSuffix = std::string("_") + variant.isaName();
      sources.emplace_back(std::string("executor-") + variant.isaName(),
                           generateExecutor(*plan, spec, manifest, variantOptions));
    }
    sources.emplace_back("dispatch", generateDispatcher(*target));
  }
  std::string dumped;
  for (const auto &[name, text] : sources)
    dumped += (sources.size() > 1 ? "// ---- " + name + ".cpp\n" : std::string()) + text;
  if (!dumpText(dumped, "8-executor.cpp"))
    return 1;
  std::vector<std::string> objects = kernels.objects;
  for (size_t i = 0; i < sources.size(); ++i) {
    std::string source = workDir + "/" + sources[i].first + ".cpp";
    std::string object = workDir + "/" + sources[i].first + ".o";
    if (!writeFileAtomically(source, sources[i].second, &error) ||
        !compileCxx(source, object, &error, &*target))
      return fail(error), 1;
    objects.insert(objects.begin() + static_cast<std::ptrdiff_t>(i), object);
  }
  if (options.emit == Stage::Lib)
    return writeLibrary(objects, *plan, spec, executorOptions) ? 0 : 1;
  bool linked = options.emit == Stage::Obj
                    ? linkRelocatable(objects, options.output, &error, &*target)
                    : linkExecutable(objects, options.output, &error, &*target);
  if (!linked)
    return fail(error), 1;
  return 0;
}

} // namespace

std::optional<Stage> parseStage(const std::string &name) {
  for (size_t i = 0; i < kStageNames.size(); ++i)
    if (name == kStageNames[i])
      return static_cast<Stage>(i);
  return std::nullopt;
}

const char *stageNames() {
  return "ast, tm, tm-opt, kernels, halide, stmt, asm, obj, exe, lib, device";
}

int runCompile(const CompileOptions &options, KernelPlan *plan) {
  return CompileJob(options, plan).run();
}

} // namespace tmc
