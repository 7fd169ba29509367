//===- Pipeline.cpp - From a spec to its kernel plan ----------------------===//

#include "compiler/Pipeline.h"

#include "compiler/Error.h"
#include "compiler/IRResultNumbers.h"
#include "compiler/KernelPlanFromIR.h"
#include "compiler/Schedule.h"
#include "compiler/TuningDb.h"
#include "dialects/tm/Passes.h"
#include "dialects/tmk/Passes.h"
#include "frontend/MLIRGen.h"
#include "frontend/Manifest.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace tmc {

PlannedModel::PlannedModel() = default;
PlannedModel::~PlannedModel() = default;

bool isIRInput(llvm::StringRef path) { return path.ends_with(".mlir"); }

namespace {

/// The largest .mlir input tmc reads (docs/spec-language.md): GPT-2 small's
/// tm stage with every location is about 50 KB, so this leaves room for far
/// larger models while a device or a runaway file is refused.
constexpr uint64_t kMaxIRBytes = uint64_t(64) << 20;

/// Parses a module written by an earlier stage (`--emit=tm`, `--emit=tm-opt`,
/// `--dump-stages-to`, or edited by hand) into `model`, and loads the spec it
/// was built from: the plan needs the spec's inputs and manifest.
/// `specOverride` (--spec) names the spec when the module's `tm.spec`
/// attribute is absent or stale.
llvm::Error loadModule(PlannedModel &model, const std::string &path,
                       const std::string &specOverride) {
  mlir::MLIRContext &context = *model.context;
  context.getOrLoadDialect<tm::TMDialect>();
  context.getOrLoadDialect<tmk::TMKDialect>();
  context.getOrLoadDialect<mlir::func::FuncDialect>();
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      readInputFile(path, kMaxIRBytes, "the IR input");
  if (!buffer)
    return withContext(buffer.takeError(), "cannot open input file '" + path + "'");
  unsigned bufferId = model.irSourceMgr->AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  if (!checkResultNumbers(*model.irSourceMgr, bufferId))
    return makeDiagnosedError();
  model.module = mlir::parseSourceFile<mlir::ModuleOp>(*model.irSourceMgr, &context);
  if (!model.module)
    return makeDiagnosedError();
  std::string specPath = specOverride;
  if (specPath.empty()) {
    auto attr = (*model.module)->getAttrOfType<mlir::StringAttr>(kSpecAttrName);
    if (!attr)
      return makeError(path + ": the module has no '" + kSpecAttrName +
                       "' attribute naming the spec it was built from; pass --spec MODEL.tm");
    specPath = attr.getValue().str();
  }
  model.ownedSpec = loadSpec(specPath, llvm::errs());
  if (!model.ownedSpec.ok())
    return makeError(path + ": cannot load its spec '" + specPath +
                     "' (pass --spec MODEL.tm to name another)");
  model.loaded = &model.ownedSpec;
  // Edited IR is held to its spec like the spec itself: a weight whose name
  // or shape the manifest does not have, or a cache of other than max_seq
  // rows, is an error at the op's spec line, before any pass runs (the
  // executable would read the file's tensor with the wrong shape, or append
  // past the cache).
  if (mlir::failed(verifyWeights(*model.module, buildManifest(model.spec()))) ||
      mlir::failed(verifyCacheCapacities(*model.module, model.spec().maxSeq)))
    return makeDiagnosedError();
  return llvm::Error::success();
}

/// A pass manager with MLIR's own command-line options (--mlir-print-ir-*,
/// --mlir-timing, ...) applied, as the tmc tool registers them.
llvm::Expected<std::unique_ptr<mlir::PassManager>> makePassManager(PlannedModel &model,
                                                                   const PipelineOptions &options,
                                                                   bool timing) {
  auto pm = std::make_unique<mlir::PassManager>(model.context.get(),
                                                mlir::ModuleOp::getOperationName());
  if (options.quiet) // a plan for sizes only: no IR printing, no timing
    return std::move(pm);
  // Registered by the tmc tool before it parses its command line; here for
  // any other program that runs the pipeline (registering is idempotent).
  mlir::registerPassManagerCLOptions();
  if (mlir::failed(mlir::applyPassManagerCLOptions(*pm)))
    return makeError("invalid MLIR pass-manager options");
  if (timing) {
    auto timer = std::make_unique<mlir::DefaultTimingManager>();
    mlir::applyDefaultTimingManagerCLOptions(*timer);
    if (timer->isEnabled())
      pm->enableTiming(std::move(timer));
  }
  if (options.printIRAfterAll) {
    model.context->disableMultithreading();
    pm->enableIRPrinting([](mlir::Pass *, mlir::Operation *) { return false; },
                         [](mlir::Pass *, mlir::Operation *) { return true; },
                         /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  }
  return std::move(pm);
}

/// What the executable needs of the spec beyond the kernel calls.
ModelDesc describeModel(const ModelSpec &spec, const std::string &sourceName) {
  ModelDesc model;
  model.name = spec.name;
  model.sourceName = sourceName;
  model.output = spec.output;
  model.vocab = spec.vocab;
  model.maxSeq = spec.maxSeq;
  model.dModel = spec.dModel;
  model.layers = (spec.encoder.present ? spec.encoder.layers : 0) +
                 (spec.decoder.present ? spec.decoder.layers : 0);
  model.segments = spec.segments;
  model.weightScheme = spec.weightScheme;
  return model;
}

/// --tuning-db: the database's schedules for `plan` on `target`, and what
/// was found said on stderr.
llvm::Expected<ScheduleTable> tunedSchedules(const std::string &path, const KernelPlan &plan,
                                             const TargetInfo &target) {
  llvm::Expected<TuningDb> db = loadTuningDb(path);
  if (!db)
    return withContext(db.takeError(), "--tuning-db");
  std::vector<std::string> warnings, found, atDefault;
  ScheduleTable table = selectSchedules(*db, plan, target, &warnings, &found, &atDefault);
  for (const std::string &warning : warnings)
    reportWarning(path + ": " + warning);
  llvm::errs() << "tmc: " << path << ": tuned schedules for " << found.size() << " of "
               << plan.kernels.size() << " kernels";
  for (size_t i = 0; i < found.size(); ++i)
    llvm::errs() << (i ? ", " : ": ") << found[i];
  if (!atDefault.empty())
    llvm::errs() << "; " << atDefault.size() << " more tuned and kept their default";
  llvm::errs() << "\n";
  return table;
}

/// The stages up to the plan, each reported to `onStage`; false when one
/// stopped the pipeline.
llvm::Expected<bool> runStages(PlannedModel &model, const PipelineOptions &options,
                               StageHook onStage) {
  auto stopAfter = [&](Stage stage) -> llvm::Expected<bool> {
    return onStage ? onStage(stage, model) : false;
  };
  mlir::MLIRContext &context = *model.context;
  // Stages: ast and tm, or (for a .mlir input) the module to resume from.
  if (options.loaded) {
    model.loaded = options.loaded;
  } else if (isIRInput(options.input)) {
    // The handler opens the spec files that locations name, so errors in
    // the module still show the spec line they came from. A quiet run
    // (tests/fuzz/IRFuzzer.cpp) drops them, as for a spec.
    if (!options.quiet)
      model.diagnostics = std::make_unique<mlir::SourceMgrDiagnosticHandler>(
          *model.irSourceMgr, &context, llvm::errs());
    if (llvm::Error error = loadModule(model, options.input, options.spec))
      return std::move(error);
  } else {
    model.ownedSpec = loadSpec(options.input, llvm::errs(), options.overrides);
    if (!model.ownedSpec.ok())
      return makeDiagnosedError();
    model.loaded = &model.ownedSpec;
    llvm::Expected<bool> stop = stopAfter(Stage::AST);
    if (!stop || *stop)
      return stop ? llvm::Expected<bool>(false) : stop.takeError();
  }
  if (!model.module) {
    // Diagnostics from here on carry spec locations, so the handler prints
    // them with the spec's source line.
    if (!options.quiet)
      model.diagnostics = std::make_unique<mlir::SourceMgrDiagnosticHandler>(
          *model.loaded->sourceMgr, &context, llvm::errs());
    model.module = buildModule(context, *model.loaded->sourceMgr, model.spec());
    if (!model.module)
      return makeDiagnosedError();
  }
  for (Stage stage : {Stage::TM, Stage::TMOpt, Stage::Kernels}) {
    if (stage == Stage::TMOpt || stage == Stage::Kernels) {
      llvm::Expected<std::unique_ptr<mlir::PassManager>> pm =
          makePassManager(model, options, /*timing=*/stage == Stage::TMOpt);
      if (!pm)
        return pm.takeError();
      if (stage == Stage::TMOpt)
        tm::buildOptimizationPipeline(**pm, {options.optLevel, options.explain});
      else
        tmk::buildKernelPipeline(**pm, options.explain, options.optLevel);
      if (mlir::failed((*pm)->run(*model.module)))
        return makeDiagnosedError();
    }
    if (stage == Stage::Kernels) {
      // The plan: the calls read from the tmk module, the manifest and the
      // model's description beside them.
      std::vector<TensorSpec> manifest = buildManifest(model.spec());
      mlir::FailureOr<KernelPlan> plan = formKernels(*model.module, manifest, options.explain);
      if (mlir::failed(plan))
        return makeDiagnosedError();
      model.plan = std::move(*plan);
      model.plan.weights = std::move(manifest);
      model.plan.model = describeModel(model.spec(), options.input);
    }
    llvm::Expected<bool> stop = stopAfter(stage);
    if (!stop || *stop)
      return stop ? llvm::Expected<bool>(false) : stop.takeError();
  }
  return true;
}

} // namespace

llvm::Expected<std::unique_ptr<PlannedModel>> runPipeline(const PipelineOptions &options,
                                                          StageHook onStage) {
  auto model = std::make_unique<PlannedModel>();
  // One thread for a quiet plan: even a large model's plan forms in
  // milliseconds, less than starting a thread pool takes.
  model->context = std::make_unique<mlir::MLIRContext>(
      options.quiet ? mlir::MLIRContext::Threading::DISABLED
                    : mlir::MLIRContext::Threading::ENABLED);
  model->context->printOpOnDiagnostic(false);
  model->irSourceMgr = std::make_unique<llvm::SourceMgr>();
  std::optional<mlir::ScopedDiagnosticHandler> quiet;
  if (options.quiet)
    quiet.emplace(model->context.get(), [](mlir::Diagnostic &) { return mlir::success(); });

  llvm::Expected<bool> ran = runStages(*model, options, onStage);
  if (!ran)
    return ran.takeError();
  if (!*ran || options.target.empty()) {
    model->complete = *ran;
    return std::move(model);
  }
  // Schedules: resolved once, for every concrete target of the target.
  llvm::Expected<TargetInfo> target = resolveTarget(options.target);
  if (!target)
    return target.takeError();
  // A plan that multiplies in reduced precision also gets the host's
  // dot-product variant. GPU targets compile every precision as they are,
  // and so do GPU schedules on the host, which use no dot products (there
  // the variant's AVX512-FP16 would turn their 16-bit moves into vmovw,
  // which Zen 4 lacks).
  const bool reduced = llvm::any_of(
      model->plan.kernels, [](const KernelDesc &kernel) { return kernel.precision != "f32"; });
  model->target = reduced && !gpuSchedulesOnHost() ? withDotProductVariant(*target) : *target;
  if (target->native && !model->target->variants.empty())
    model->target = runnableVariant(*model->target);
  const TargetInfo &resolved = *model->target;
  ScheduleTable tuned;
  if (!options.tuningDb.empty()) {
    llvm::Expected<ScheduleTable> table = tunedSchedules(options.tuningDb, model->plan, resolved);
    if (!table)
      return table.takeError();
    tuned = std::move(*table);
  }
  resolveSchedules(model->plan, resolved, tuned);
  model->complete = true;
  return std::move(model);
}

std::string moduleText(mlir::ModuleOp module, bool withLocations) {
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  if (withLocations)
    flags.enableDebugInfo(true, /*prettyForm=*/false);
  module.print(os, flags);
  return text;
}

std::string kernelsStageText(PlannedModel &model, bool withLocations) {
  std::string listing;
  llvm::raw_string_ostream os(listing);
  printKernelPlan(model.plan, os);
  std::string comment = "\n// The kernel plan this module reads as:\n";
  for (llvm::StringRef line : llvm::split(llvm::StringRef(listing).rtrim('\n'), '\n'))
    comment += line.empty()               ? "//\n"
               : line.starts_with("//") ? line.str() + "\n"
                                         : "// " + line.str() + "\n";
  return moduleText(*model.module, withLocations) + comment;
}

} // namespace tmc
