//===- PreparedWeights.h - What an executable builds from its weights -*- C++ -*-===//
//
// Before the first run an executable prepares its weights once: every linear
// weight packed into its GEMM's panel layout (LowerPack.cpp's contract), and
// every stacked weight (KernelPlan::joined, a fused projection's) built from
// its parts. This is the layout of that prepared block and the generator of
// the executor's prepare(); ExecutorGen writes run(), which reads the block.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/ExecutorOptions.h"
#include "compiler/KernelPlan.h"
#include "compiler/Schedule.h"

#include "llvm/Support/raw_ostream.h"

#include <set>
#include <utility>
#include <vector>

namespace tmc {

/// One linear weight as its GEMM reads it, packed at `offset` floats.
struct PackedWeight {
  size_t kernel;
  Slot source; ///< a manifest Weight, or a Joined weight stacked first
  GemmLayout layout;
  int64_t offset;
  /// Its size in floats (bf16: two elements a float, K rounded up to even;
  /// int8: four, K rounded up to a multiple of 4, plus two rows per panel;
  /// q4: 4.5 bits a weight, K in whole pairs of blocks of 32).
  int64_t floats() const { return layout.packedWords(); }
  /// The generated executor's View arguments for it, after the data pointer:
  /// its Halide type and extents (LowerPack.cpp's contract).
  std::string viewArguments() const;
};

/// A weight some kernel reads unpacked, in the shape it reads it (GPU: one
/// persistent device view each).
using RawView = std::pair<Slot, std::vector<int64_t>>;

struct PreparedWeights {
  std::vector<PackedWeight> packs;
  /// Per KernelPlan::joined entry: where its stacked copy sits in the block
  /// when some kernel reads it unpacked (a stacked bias), else -1.
  std::vector<int64_t> joinedOffset;
  int64_t floats = 0; ///< the whole block
  /// Manifest tensors some kernel reads unpacked (as well as any packed copy).
  std::set<int64_t> readRaw;

  bool empty() const { return floats == 0; }
  /// The packed weight `call` reads as its argument
  /// KernelDesc::packedArgument() (a linear's weight, a tied table looked up
  /// in its head's precision), or null.
  const PackedWeight *packOf(const KernelCall &call, const KernelPlan &plan) const;
};

PreparedWeights planPreparedWeights(const KernelPlan &plan, const TargetInfo &target);

/// How a weights file may hold each manifest tensor besides its manifest
/// dtype, pre-quantized (`tmc quantize` writes it so, the loader accepts it
/// so; tmr_abi.h's tmr_quantized, docs/spec-language.md's format): "bf16",
/// "int8" or "q4" where every kernel that reads the tensor reads it packed in
/// that precision (a tied head's table too, when the lookup reads the head's
/// packed copy); "" for the rest (a bias, a norm, an f32 linear's weight, a
/// table some kernel reads unpacked). Needs no target: the layouts do not
/// matter here.
std::vector<std::string> quantizedStorage(const KernelPlan &plan);

/// Manifest tensors a weight slot is made of: itself, or a stack's parts.
std::vector<int64_t> manifestSources(const KernelPlan &plan, const Slot &slot);

/// Writes the executor's prepare() and release(): packs (after stacking),
/// copies stacked weights read raw, and on a GPU target uploads every packed
/// weight and every view of `rawViews`, once.
void emitPrepare(llvm::raw_ostream &os, const KernelPlan &plan, const PreparedWeights &prepared,
                 const std::vector<RawView> &rawViews, const ExecutorOptions &options);

} // namespace tmc
