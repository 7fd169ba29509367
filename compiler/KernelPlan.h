//===- KernelPlan.h - From fused tm ops to kernel calls ---------*- C++ -*-===//
//
// The `kernels` stage: every op left after fusion becomes one call of one
// kernel. Calls whose ops agree on kind and static shape share a kernel (the
// layers of a stack compile once). Values get arena offsets from their live
// ranges. The plan is plain data with no MLIR or Halide types, so that the
// Halide lowering and the executor generator both read it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace tmc {

enum class KernelKind {
  Embed,
  AddPositions,
  Linear,
  Attention,
  Add,
  Activation,
  LayerNorm,
  AddLayerNorm,
};

/// The static description of one kernel: what Halide compiles.
struct KernelDesc {
  KernelKind kind;
  int64_t width = 0;       ///< output features (d_model, N of a linear, heads*head_dim)
  int64_t inWidth = 0;     ///< linear: K
  int64_t tableRows = 0;   ///< embed: vocab
  int64_t positionRows = 0; ///< learned positions: rows of the table (max_seq)
  int64_t heads = 0, kvHeads = 0, headDim = 0;
  double scale = 1.0;      ///< embed: embedding scale; attention: score scale
  double eps = 0;          ///< norms
  std::string position;    ///< embed / add_positions: none | sinusoidal | learned
  std::string activation;  ///< linear epilogue or activation kind
  bool hasBias = false;    ///< linear

  /// Unique, C-identifier-safe name, e.g. `linear_k64_n128_b_relu`.
  std::string name() const;
};

/// How an executor argument is laid out: Halide dimensions, innermost first.
/// An extent of -1 stands for the run-time token count.
struct BufferShape {
  bool isInt32 = false;
  std::vector<int64_t> extents;
};

/// Parameters of a kernel in call order; the output is last.
std::vector<BufferShape> kernelSignature(const KernelDesc &kernel);

/// Where a kernel argument lives at run time.
struct Slot {
  enum class Kind { Tokens, Weight, Arena, Output } kind;
  int64_t index = 0;  ///< Weight: manifest index; Arena: offset in units of T floats
  int64_t width = 0;  ///< floats per token (Arena / Output)
};

struct KernelCall {
  size_t kernel;            ///< index into KernelPlan::kernels
  std::vector<Slot> args;   ///< inputs in signature order, then the output
  std::string opName;       ///< e.g. "tm.linear"
  std::string location;     ///< spec location, "encoder.layers.0.self_attn" @ file:line:col
};

struct KernelPlan {
  std::vector<KernelDesc> kernels;
  std::vector<KernelCall> calls;
  int64_t arenaWidth = 0;   ///< arena size in units of T floats
  int64_t outputWidth = 0;
};

/// Forms the plan from the optimized module's @forward. `manifest` gives each
/// weight name its index. Fails (with an MLIR diagnostic) on an op it cannot map.
mlir::FailureOr<KernelPlan> formKernels(mlir::ModuleOp module,
                                        const std::vector<std::string> &manifest);

/// The --emit=kernels listing.
void printKernelPlan(const KernelPlan &plan, llvm::raw_ostream &os);

} // namespace tmc
