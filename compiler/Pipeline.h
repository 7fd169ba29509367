//===- Pipeline.h - From a spec to its kernel plan --------------*- C++ -*-===//
//
// The one way from a model spec (or an IR stage saved from one) to what the
// back end compiles: the `tm` module after the kernel passes, and the
// KernelPlan read from it, with the weight manifest, the model's description
// and every kernel's schedule resolved for the target. `tmc compile`,
// `tmc tune` and its report, `tmc verify` and the memory estimate of
// `tmc check` all get their plan here; nothing else runs the passes.
//
//   spec ─loadSpec─▶ AST ─buildModule─▶ tm ─tm passes─▶ tm-opt
//        ─tmk passes─▶ kernels ─formKernels─▶ KernelPlan ─resolveSchedules─▶ plan + schedules
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelPlan.h"
#include "compiler/Target.h"
#include "frontend/Frontend.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class SourceMgr;
}
namespace mlir {
class MLIRContext;
class SourceMgrDiagnosticHandler;
} // namespace mlir

namespace tmc {

/// The stages of `tmc compile` in pipeline order; `--emit=STAGE` stops after
/// one. The pipeline runs AST .. Kernels; the back end (Driver.cpp) the rest.
/// Lib is the alternative to Exe: libNAME.a + NAME.h for embedding
/// (runtime/tmr.h). Device (GPU targets) writes each kernel's PTX.
enum class Stage { AST, TM, TMOpt, Kernels, Halide, Stmt, Asm, Obj, Exe, Lib, Device };

struct PipelineOptions {
  std::string input;          ///< MODEL.tm, or a module saved by an IR stage (.mlir)
  std::string spec;           ///< --spec: the spec of a .mlir input (default: its tm.spec)
  /// --precision: applied as a .tm input is checked (a .mlir input's
  /// linears carry their precision already).
  SpecOverrides overrides;
  /// A spec loaded already (`input` and `spec` are then unused): the model
  /// keeps a pointer to it, so it must outlive the model.
  const LoadedSpec *loaded = nullptr;
  /// The target whose schedules the plan carries; empty: none are resolved
  /// (a plan for its sizes only, e.g. the memory estimate).
  std::string target;
  std::string tuningDb;       ///< --tuning-db: tuned schedules, else the defaults
  unsigned optLevel = 2;
  bool explain = false;       ///< remarks: fusions made and declined, op -> kernel
  bool printIRAfterAll = false;
  /// Diagnostics are dropped and the context runs one thread (the memory
  /// estimate: a plan that cannot form only means no estimate, and the
  /// compile reports why).
  bool quiet = false;
};

/// A model on its way through the pipeline, and at the end its plan. Owns
/// the MLIR context its module lives in and the handler that prints
/// diagnostics at spec locations, so the back end can still report errors.
struct PlannedModel {
  PlannedModel();
  ~PlannedModel();
  PlannedModel(const PlannedModel &) = delete;
  PlannedModel &operator=(const PlannedModel &) = delete;

  const ModelSpec &spec() const { return *loaded->spec; }

  LoadedSpec ownedSpec;                 ///< the spec, when the pipeline loaded it
  const LoadedSpec *loaded = nullptr;   ///< the spec: &ownedSpec or PipelineOptions::loaded
  std::unique_ptr<mlir::MLIRContext> context;
  std::unique_ptr<llvm::SourceMgr> irSourceMgr; ///< a .mlir input's text
  std::unique_ptr<mlir::SourceMgrDiagnosticHandler> diagnostics;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// Set once the Kernels stage ran: the calls, the manifest (plan.weights)
  /// and the model's description (plan.model); the schedules once the
  /// target is resolved.
  KernelPlan plan;
  std::optional<TargetInfo> target;     ///< resolved, when options.target was given
  bool complete = false;                ///< every stage ran (no hook stopped it)
};

/// Called after each stage it runs (AST for a .tm input, then TM, TMOpt,
/// Kernels) with the model so far: true stops the pipeline there (the result
/// then has `complete` false); an error ends it.
using StageHook = llvm::function_ref<llvm::Expected<bool>(Stage, PlannedModel &)>;

/// Whether `path` names a module saved by an IR stage (.mlir), not a spec.
bool isIRInput(llvm::StringRef path);

/// Runs the pipeline. Errors in the spec or the IR have been printed as
/// diagnostics when it fails with a DiagnosedError (compiler/Error.h).
llvm::Expected<std::unique_ptr<PlannedModel>> runPipeline(const PipelineOptions &options,
                                                          StageHook onStage = nullptr);

/// The --emit=kernels text of `model`: the tmk module (it parses again),
/// then the plan it reads as, in a comment block.
std::string kernelsStageText(PlannedModel &model, bool withLocations);

/// The module's text, with spec locations if `withLocations`.
std::string moduleText(mlir::ModuleOp module, bool withLocations);

} // namespace tmc
