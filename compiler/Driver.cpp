//===- Driver.cpp - The stages of `tmc compile` ---------------------------===//
//
// spec -> AST -> tm -> tm-opt -> kernels (the pipeline, Pipeline.cpp: one
//      function from the spec to the plan with its schedules)
//      -> halide (lowering + schedules) -> stmt/asm/obj (Halide AOT)
//      -> exe (generated executor + runtime, linked by the system compiler).
// Each stage's text can be emitted alone (--emit) or all dumped (--dump-stages-to).
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver.h"

#include "compiler/BufferLimits.h"
#include "compiler/Error.h"
#include "compiler/ExecutorGen.h"
#include "compiler/KernelPlan.h"
#include "compiler/Pipeline.h"
#include "compiler/Target.h"
#include "compiler/Toolchain.h"
#include "compiler/halide/KernelCompiler.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <tuple>

namespace tmc {

namespace {

constexpr std::array<const char *, 11> kStageNames = {
    "ast", "tm", "tm-opt", "kernels", "halide", "stmt", "asm", "obj", "exe", "lib", "device"};

/// The file --dump-stages-to writes for each stage's text (under Exe: the
/// executor's source).
constexpr std::array<std::pair<Stage, const char *>, 8> kDumpFiles = {{
    {Stage::AST, "1-ast.txt"},
    {Stage::TM, "2-tm.mlir"},
    {Stage::TMOpt, "3-tm-opt.mlir"},
    {Stage::Kernels, "4-kernels.mlir"},
    {Stage::Halide, "5-halide.txt"},
    {Stage::Stmt, "6-stmt.txt"},
    {Stage::Asm, "7-asm.s"},
    {Stage::Exe, "8-executor.cpp"},
}};

const char *dumpFileName(Stage stage) {
  for (auto [dumped, name] : kDumpFiles)
    if (dumped == stage)
      return name;
  return nullptr;
}

class CompileJob {
public:
  CompileJob(const CompileOptions &options, KernelPlan *planOut)
      : options(options), planOut(planOut) {}

  ~CompileJob() {
    if (!workDir.empty())
      llvm::sys::fs::remove_directories(workDir);
  }

  llvm::Error run();

private:
  /// Checks, before minutes of compiling, that the output can land.
  llvm::Error checkOutput() const;
  /// Refuses, before anything is written, an output that is one of the
  /// files the job reads (`inputs`: the input, the spec `specPath`, the
  /// tuning database): -o (under --emit=lib, the archive and header it
  /// names) and every file --dump-stages-to writes. Run before the pipeline
  /// and again once the spec is loaded: only then does a .mlir input name its
  /// spec, and -o DIR name a library after the model (`modelName`).
  llvm::Error checkNoOutputIsAnInput(const std::string &specPath, const std::string &modelName);
  /// `--emit=lib`: the archive and the header -o names; -o DIR names them
  /// after the model (none while `modelName` is unknown, empty).
  llvm::Expected<std::vector<std::string>> libraryFiles(const std::string &modelName) const;
  /// Records a stage's text: dumped with --dump-stages-to (as `dumpName`),
  /// written or printed if it is the --emit stage. True when the pipeline
  /// should stop here.
  llvm::Expected<bool> finishStage(Stage stage, const std::string &text, const char *dumpName);
  /// Writes `text` into the --dump-stages-to directory, if one was given.
  llvm::Error dumpText(const std::string &text, const char *dumpName);
  /// The pipeline's stages up to the plan (PipelineOptions' StageHook).
  llvm::Expected<bool> finishFrontStage(Stage stage, PlannedModel &model);
  llvm::Error makeWorkDir();
  /// The back end: Halide, then the executor, then the link.
  llvm::Error compileKernels(const PlannedModel &model);
  /// `--emit=lib`: libNAME.a and NAME.h.
  llvm::Error writeLibrary(const std::vector<std::string> &objects, const KernelPlan &plan,
                           const TargetInfo &target);
  /// `--emit=device`: DIR/<kernel>.ptx for every kernel with GPU code.
  llvm::Error writeDeviceCode(const KernelBuildResult &kernels);
  bool wants(Stage stage) const { return options.emit == stage || dumping(); }
  bool dumping() const { return !options.dumpStagesTo.empty(); }
  bool irInput() const { return isIRInput(options.input); }

  const CompileOptions &options;
  KernelPlan *planOut;
  std::string workDir;
  std::vector<tmr::InputFile> inputs; ///< what the job reads, with their roles
  bool loadedSpecChecked = false;
};

llvm::Error CompileJob::dumpText(const std::string &text, const char *dumpName) {
  if (!dumping() || !dumpName)
    return llvm::Error::success();
  llvm::SmallString<256> path(options.dumpStagesTo);
  llvm::sys::path::append(path, dumpName);
  return writeFileAtomically(std::string(path), text);
}

llvm::Expected<bool> CompileJob::finishStage(Stage stage, const std::string &text,
                                             const char *dumpName) {
  if (llvm::Error error = dumpText(text, dumpName))
    return std::move(error);
  if (options.emit != stage)
    return false;
  if (options.output.empty() || options.output == "-") {
    llvm::outs() << text;
    return true;
  }
  if (llvm::Error error = writeFileAtomically(options.output, text))
    return std::move(error);
  return true;
}

llvm::Expected<bool> CompileJob::finishFrontStage(Stage stage, PlannedModel &model) {
  if (!loadedSpecChecked) {
    loadedSpecChecked = true;
    const llvm::SourceMgr &source = *model.loaded->sourceMgr;
    std::string specPath =
        source.getMemoryBuffer(source.getMainFileID())->getBufferIdentifier().str();
    if (llvm::Error error = checkNoOutputIsAnInput(specPath, model.spec().name))
      return std::move(error);
  }
  switch (stage) {
  case Stage::AST: {
    std::string text;
    llvm::raw_string_ostream os(text);
    dumpAST(*model.loaded->ast, *model.loaded->sourceMgr, os);
    return finishStage(Stage::AST, text, dumpFileName(Stage::AST));
  }
  case Stage::TM:
  case Stage::TMOpt: {
    // Dumps always carry the spec locations; --emit shows them with MLIR's
    // own --mlir-print-debuginfo, like mlir-opt.
    if (llvm::Error error = dumpText(moduleText(*model.module, true), dumpFileName(stage)))
      return std::move(error);
    if (options.emit != stage)
      return false;
    return finishStage(stage, moduleText(*model.module, false), nullptr);
  }
  case Stage::Kernels:
    if (planOut)
      *planOut = model.plan;
    if (llvm::Error error = dumpText(kernelsStageText(model, true), dumpFileName(Stage::Kernels)))
      return std::move(error);
    if (options.emit != Stage::Kernels)
      return false;
    return finishStage(Stage::Kernels, kernelsStageText(model, false), nullptr);
  default:
    return false;
  }
}

llvm::Error CompileJob::makeWorkDir() {
  llvm::SmallString<256> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("tmc", dir))
    return makeError("cannot create a temporary directory: " + ec.message());
  workDir = std::string(dir);
  return llvm::Error::success();
}

llvm::Error CompileJob::writeLibrary(const std::vector<std::string> &objects,
                                     const KernelPlan &plan, const TargetInfo &target) {
  llvm::Expected<std::vector<std::string>> files = libraryFiles(plan.model.name);
  if (!files)
    return files.takeError();
  const std::string &archive = (*files)[0], &header = (*files)[1];
  llvm::Expected<std::string> runtimeHeader = readRuntimeHeader();
  if (!runtimeHeader)
    return runtimeHeader.takeError();
  // The library's name is the header's, less ".h".
  std::string name = llvm::sys::path::stem(header).str();
  std::string headerText = generateLibraryHeader(plan, name, *runtimeHeader);
  // The archive first: a header without its library is the worse half.
  llvm::Error error = archiveLibrary(objects, archive, workDir, &target);
  if (!error)
    error = writeFileAtomically(header, headerText);
  if (error)
    llvm::sys::fs::remove(archive);
  return error;
}

llvm::Expected<std::vector<std::string>>
CompileJob::libraryFiles(const std::string &modelName) const {
  // -o DIR names the library after the model; -o DIR/NAME (or DIR/libNAME.a) chooses.
  std::string dir = options.output, name = modelName;
  if (!llvm::sys::fs::is_directory(options.output)) {
    dir = llvm::sys::path::parent_path(options.output).str();
    name = llvm::sys::path::filename(options.output).str();
    llvm::StringRef stem(name);
    if (stem.consume_back(".a"))
      stem.consume_front("lib");
    name = stem.str();
    if (name.empty())
      return makeError("-o " + options.output + ": no library name");
  }
  if (name.empty())
    return std::vector<std::string>();
  llvm::SmallString<256> archive(dir), header(dir);
  llvm::sys::path::append(archive, "lib" + name + ".a");
  llvm::sys::path::append(header, name + ".h");
  return std::vector<std::string>{std::string(archive), std::string(header)};
}

llvm::Error CompileJob::checkNoOutputIsAnInput(const std::string &specPath,
                                               const std::string &modelName) {
  inputs = {{irInput() ? "the input" : "the spec", options.input},
            {"the spec", specPath},
            {"the tuning database", options.tuningDb}};
  std::vector<std::pair<std::string, std::string>> outputs; // role, path
  if (options.emit == Stage::Lib) {
    llvm::Expected<std::vector<std::string>> files = libraryFiles(modelName);
    if (!files)
      return files.takeError();
    for (const std::string &file : *files)
      outputs.emplace_back("-o", file);
  } else if (options.emit != Stage::Device && !options.output.empty() && options.output != "-") {
    outputs.emplace_back("-o", options.output); // device code: checked as it is written
  }
  if (dumping())
    for (const auto &dumped : kDumpFiles) {
      llvm::SmallString<256> path(options.dumpStagesTo);
      llvm::sys::path::append(path, dumped.second);
      outputs.emplace_back("--dump-stages-to", std::string(path));
    }
  for (const auto &[role, path] : outputs)
    if (llvm::Error error = checkNotAnInput(role, path, inputs))
      return error;
  return llvm::Error::success();
}

llvm::Error CompileJob::writeDeviceCode(const KernelBuildResult &kernels) {
  if (std::error_code ec = llvm::sys::fs::create_directories(options.output))
    return makeError("-o " + options.output + ": cannot create the directory: " + ec.message());
  for (const auto &[kernel, code] : kernels.deviceCode) {
    llvm::SmallString<256> path(options.output);
    llvm::sys::path::append(path, kernel + ".ptx");
    // Named after kernels, known only now.
    if (llvm::Error error = checkNotAnInput("-o", std::string(path), inputs))
      return error;
    if (llvm::Error error = writeFileAtomically(std::string(path), code))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error CompileJob::checkOutput() const {
  if (options.emit >= Stage::Obj && options.output.empty())
    return makeUsageError(options.emit == Stage::Lib
                              ? "-o DIR (or DIR/NAME) is required to write a library"
                          : options.emit == Stage::Device
                              ? "-o DIR is required to write device code"
                              : "-o OUT is required to write an executable or object");
  if (options.output.empty() || options.output == "-")
    return llvm::Error::success();
  llvm::StringRef parent = llvm::sys::path::parent_path(options.output);
  bool libraryDir = (options.emit == Stage::Lib || options.emit == Stage::Device) &&
                    llvm::sys::fs::is_directory(options.output);
  if (!libraryDir && !parent.empty() && !llvm::sys::fs::is_directory(parent))
    return makeError("-o " + options.output + ": the directory '" + parent.str() +
                     "' does not exist");
  if (!libraryDir && llvm::sys::fs::is_directory(options.output))
    return makeError("-o " + options.output + ": is a directory");
  return llvm::Error::success();
}

llvm::Error CompileJob::run() {
  // The spec a .mlir input names is known once it is parsed (checked then).
  if (llvm::Error error = checkNoOutputIsAnInput(irInput() ? options.spec : options.input, ""))
    return error;
  if (dumping())
    if (std::error_code ec = llvm::sys::fs::create_directories(options.dumpStagesTo))
      return makeError("--dump-stages-to: cannot create '" + options.dumpStagesTo +
                       "': " + ec.message());
  if (llvm::Error error = checkOutput())
    return error;
  if (options.emit == Stage::AST && irInput())
    return makeError("--emit=ast needs a .tm input; " + options.input + " is already IR");

  PipelineOptions pipeline;
  pipeline.input = options.input;
  pipeline.spec = options.spec;
  pipeline.target = options.target;
  pipeline.tuningDb = options.tuningDb;
  pipeline.overrides = options.overrides;
  pipeline.optLevel = options.optLevel;
  pipeline.explain = options.explain;
  pipeline.printIRAfterAll = options.printIRAfterAll;
  llvm::Expected<std::unique_ptr<PlannedModel>> model =
      runPipeline(pipeline, [&](Stage stage, PlannedModel &model) {
        return finishFrontStage(stage, model);
      });
  if (!model)
    return model.takeError();
  if (!(*model)->complete)
    return llvm::Error::success();
  if (planOut)
    *planOut = (*model)->plan;
  return compileKernels(**model);
}

llvm::Error CompileJob::compileKernels(const PlannedModel &model) {
  const KernelPlan &plan = model.plan;
  const TargetInfo &target = *model.target;
  // Halide would compile such a kernel anyway, for minutes, warning only
  // that it must fail when it runs (BufferLimits.h).
  if (std::optional<std::string> oversized = findOversizedBuffer(plan, &target))
    return makeError(*oversized);
  // Stages: halide, stmt, asm.
  KernelBuildRequest request;
  request.compileObjects = options.emit > Stage::Halide || dumping();
  request.wantStmt = wants(Stage::Stmt);
  request.wantAssembly = wants(Stage::Asm);
  request.wantDevice = options.emit == Stage::Device;
  if (request.compileObjects)
    if (llvm::Error error = makeWorkDir())
      return error;
  request.workDir = workDir;
  request.kernelCache = options.kernelCache;
  request.jobs = options.jobs;
  llvm::Expected<KernelBuildResult> kernels = buildKernels(plan, target, request);
  if (!kernels)
    return kernels.takeError();
  if (options.explain && !options.kernelCache.empty() && request.compileObjects)
    llvm::errs() << "tmc: kernel cache '" << options.kernelCache << "': " << kernels->cachedObjects
                 << " of " << kernels->cachedObjects + kernels->compiledObjects
                 << " objects reused, " << kernels->compiledObjects << " compiled; "
                 << kernels->unloweredObjects << " found without lowering their kernels\n";
  for (auto [stage, text, dumpName] :
       {std::tuple{Stage::Halide, &kernels->halideText, dumpFileName(Stage::Halide)},
        std::tuple{Stage::Stmt, &kernels->stmtText, dumpFileName(Stage::Stmt)},
        std::tuple{Stage::Asm, &kernels->assemblyText, dumpFileName(Stage::Asm)}}) {
    if (stage != Stage::Halide && !wants(stage))
      continue;
    llvm::Expected<bool> stop = finishStage(stage, *text, dumpName);
    if (!stop || *stop)
      return stop.takeError();
  }
  if (options.emit == Stage::Device)
    return writeDeviceCode(*kernels);

  // Stages: obj, exe. A multi-ISA target has one executor per variant (each
  // packs weights into its own kernels' layout) and a dispatcher between them.
  ExecutorOptions executorOptions{options.threads, target, options.trace, options.maxBatch,
                                  options.rowBlock};
  std::vector<std::pair<std::string, std::string>> sources; // name, text
  if (target.variants.empty()) {
    sources.emplace_back("executor", generateExecutor(plan, executorOptions));
  } else {
    for (const TargetInfo &variant : target.variants) {
      ExecutorOptions variantOptions = executorOptions;
      variantOptions.target = variant;
      variantOptions.variantSuffix = std::string("_") + variant.isaName();
      sources.emplace_back(std::string("executor-") + variant.isaName(),
                           generateExecutor(plan, variantOptions));
    }
    sources.emplace_back("dispatch", generateDispatcher(target));
  }
  std::string dumped;
  for (const auto &[name, text] : sources)
    dumped += (sources.size() > 1 ? "// ---- " + name + ".cpp\n" : std::string()) + text;
  if (llvm::Error error = dumpText(dumped, dumpFileName(Stage::Exe)))
    return error;
  // The executors compile at once, as many as --jobs allows.
  std::vector<std::pair<std::string, std::string>> sourcesAndObjects;
  std::vector<std::string> objects;
  for (const auto &[name, text] : sources) {
    std::string source = workDir + "/" + name + ".cpp";
    std::string object = workDir + "/" + name + ".o";
    if (llvm::Error error = writeFileAtomically(source, text))
      return error;
    sourcesAndObjects.emplace_back(source, object);
    objects.push_back(object);
  }
  if (llvm::Error error = compileCxxAll(sourcesAndObjects, &target,
                                        options.jobs > 0 ? options.jobs : availableCpus()))
    return error;
  objects.insert(objects.end(), kernels->objects.begin(), kernels->objects.end());
  if (options.emit == Stage::Lib)
    return writeLibrary(objects, plan, target);
  return options.emit == Stage::Obj ? linkRelocatable(objects, options.output, &target)
                                    : linkExecutable(objects, options.output, &target);
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
  return reportError(CompileJob(options, plan).run());
}

} // namespace tmc
