//===- Driver.cpp - The stages of `tmc compile` ---------------------------===//
//
// spec -> AST -> tm (MLIRGen) -> tm-opt (pass pipeline) -> kernels (plan)
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
#include "dialects/tm/Passes.h"
#include "frontend/Frontend.h"
#include "frontend/MLIRGen.h"
#include "frontend/Manifest.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <array>

namespace tmc {

namespace {

constexpr std::array<const char *, 9> kStageNames = {
    "ast", "tm", "tm-opt", "kernels", "halide", "stmt", "asm", "obj", "exe"};

class CompileJob {
public:
  explicit CompileJob(const CompileOptions &options) : options(options) {}

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
  bool wants(Stage stage) const { return options.emit == stage || dumping(); }
  bool dumping() const { return !options.dumpStagesTo.empty(); }

  const CompileOptions &options;
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

int CompileJob::run() {
  if (dumping())
    if (std::error_code ec = llvm::sys::fs::create_directories(options.dumpStagesTo))
      return fail("--dump-stages-to: cannot create '" + options.dumpStagesTo +
                  "': " + ec.message()), 1;
  if (options.emit >= Stage::Obj && options.output.empty())
    return fail("-o OUT is required to write an executable or object"), 2;
  // Say so before minutes of compiling, not after, if the output cannot land.
  if (!options.output.empty() && options.output != "-") {
    llvm::StringRef parent = llvm::sys::path::parent_path(options.output);
    if (!parent.empty() && !llvm::sys::fs::is_directory(parent))
      return fail("-o " + options.output + ": the directory '" + parent.str() +
                  "' does not exist"), 1;
    if (llvm::sys::fs::is_directory(options.output))
      return fail("-o " + options.output + ": is a directory"), 1;
  }

  // Stage: ast.
  LoadedSpec loaded = loadSpec(options.input, llvm::errs());
  if (!loaded.ok())
    return 1;
  const ModelSpec &spec = *loaded.spec;
  {
    std::string text;
    llvm::raw_string_ostream os(text);
    dumpAST(*loaded.ast, *loaded.sourceMgr, os);
    if (finishStage(Stage::AST, text, "1-ast.txt"))
      return failed;
  }

  // Stage: tm. Diagnostics from here on carry spec locations, so the handler
  // prints them with the spec's source line.
  mlir::MLIRContext context;
  context.printOpOnDiagnostic(false);
  mlir::SourceMgrDiagnosticHandler diagnostics(*loaded.sourceMgr, &context, llvm::errs());
  mlir::OwningOpRef<mlir::ModuleOp> module = buildModule(context, *loaded.sourceMgr, spec);
  if (!module)
    return 1;
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

  // Stage: kernels.
  std::vector<TensorSpec> manifest = buildManifest(spec);
  std::vector<std::string> names;
  for (const TensorSpec &tensor : manifest)
    names.push_back(tensor.name);
  mlir::FailureOr<KernelPlan> plan = formKernels(*module, names, options.explain);
  if (mlir::failed(plan))
    return 1;
  {
    std::string text;
    llvm::raw_string_ostream os(text);
    printKernelPlan(*plan, os);
    if (finishStage(Stage::Kernels, text, "4-kernels.txt"))
      return failed;
  }

  // Stages: halide, stmt, asm.
  std::string error;
  std::optional<TargetInfo> target = resolveTarget(options.target, &error);
  if (!target)
    return fail(error), 1;
  KernelBuildRequest request;
  request.compileObjects = options.emit > Stage::Halide || dumping();
  request.wantStmt = wants(Stage::Stmt);
  request.wantAssembly = wants(Stage::Asm);
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

  // Stages: obj, exe.
  ExecutorOptions executorOptions{options.input, options.threads, *target};
  std::string executor = generateExecutor(*plan, spec, manifest, executorOptions);
  if (!dumpText(executor, "8-executor.cpp"))
    return 1;
  std::string source = workDir + "/executor.cpp", object = workDir + "/executor.o";
  if (!writeFileAtomically(source, executor, &error) || !compileCxx(source, object, &error))
    return fail(error), 1;
  std::vector<std::string> objects = kernels.objects;
  objects.insert(objects.begin(), object);
  bool linked = options.emit == Stage::Obj ? linkRelocatable(objects, options.output, &error)
                                           : linkExecutable(objects, options.output, &error);
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

const char *stageNames() { return "ast, tm, tm-opt, kernels, halide, stmt, asm, obj, exe"; }

int runCompile(const CompileOptions &options) { return CompileJob(options).run(); }

} // namespace tmc
