//===- KernelPlan.h - What an executable runs, as plain data ----*- C++ -*-===//
//
// The `kernels` stage: every op left after fusion becomes one call of one
// kernel. Calls whose ops agree on kind and static shape share a kernel (the
// layers of a stack compile once). Values get arena offsets from their live
// ranges. The tmk passes (dialects/tmk) decide all of this on the kernel-level
// IR; readKernelPlan (KernelPlanFromIR.h) reads their result into this plan,
// and the pipeline (Pipeline.h) resolves every kernel's schedule into it once.
// The plan is plain data with no MLIR or Halide types: the Halide lowering,
// weight preparation and the executor generator read it, and nothing else.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelDesc.h"
#include "compiler/Schedule.h"
#include "frontend/Manifest.h"
#include "runtime/tmr_abi.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace tmc {

/// The model as the executable describes it (tmr_model_desc): what the
/// spec says beyond the kernel calls.
struct ModelDesc {
  std::string name;
  std::string sourceName;   ///< the spec file it was compiled from
  OutputKind output = OutputKind::Hidden;
  int64_t vocab = 0, maxSeq = 0, dModel = 0;
  int64_t layers = 0;       ///< encoder and decoder layers together
  int64_t segments = 0;     ///< segment (token type) rows; 0: none
  std::string weightScheme; ///< a Hugging Face family, or empty (ModelSpec)
};

/// Where a kernel argument lives at run time.
struct Slot {
  enum class Kind {
    Tokens,       ///< the run's token ids (scalars below are int32)
    Offset,       ///< tokens already in the caches
    Length,       ///< the valid (unpadded) length of the run's sequence
    SourceLength, ///< the valid length of an encoder-decoder's source
    Segments,     ///< segment ids
    Weight,
    Joined,       ///< weights stacked at load time (tmk.concat): index into KernelPlan::joined
    Arena,
    Output,
    Cache
  } kind;
  int64_t index = 0;  ///< Weight: manifest index; Arena: offset in units of T floats; Cache: cache index
  int64_t width = 0;  ///< elements per row (Arena / Output / Cache)
  /// A column range of a wider arena buffer (a tmk.split part): the view
  /// starts `column` floats into each row, rows `rowStride` floats apart.
  /// rowStride 0: a dense buffer of `width` floats per row.
  int64_t column = 0;
  int64_t rowStride = 0;
  bool strided() const { return rowStride != 0 && rowStride != width; }
};

/// Elements of a tensor of `shape` (a static one: no overflow check).
int64_t elementCount(const std::vector<int64_t> &shape);

/// A weight the executable builds once while it prepares the weights: the
/// manifest tensors `parts` stacked along dimension 0 (a fused projection's
/// weight or bias). `shape` is the stacked shape.
struct JoinedWeight {
  std::vector<int64_t> parts;
  std::vector<int64_t> shape;
  int64_t floats() const { return elementCount(shape); }
};

/// A column range of a call's result that stands for a value of its own
/// (a fused projection's q, k, v): what tmc verify compares.
struct ResultPart {
  std::string origin;
  int64_t column = 0, width = 0;
};

struct CallArg {
  Slot slot;
  BufferShape shape;  ///< this call's view of the slot
};

struct KernelCall {
  /// Kernel runs kernels[kernel]; CacheAppend copies args[0]'s rows into the
  /// cache args[1] after the rows already there.
  enum class Kind { Kernel, CacheAppend } kind = Kind::Kernel;
  /// Encode calls run once per source (the first run of a sequence, over the
  /// source tokens); Step calls run every time.
  enum class Phase { Encode, Step } phase = Phase::Step;
  size_t kernel = 0;        ///< index into KernelPlan::kernels
  std::vector<CallArg> args; ///< inputs in signature order, then the output
  std::string opName;       ///< e.g. "tm.linear"
  std::string location;     ///< spec location, "encoder.layers.0.self_attn.q" @ file:line:col
  std::string origin;       ///< the value it computes, "encoder.layers.0.self_attn.q"
  std::vector<ResultPart> parts; ///< the values its result holds side by side, if split
  /// Values fusion folded into this call that it computes but does not write
  /// out (a residual add fused into the norm after it): `tmc verify` lists
  /// them as fused into this call instead of comparing them.
  std::vector<std::string> foldedValues;
};

/// One key or value cache of a decoder layer: `capacity` rows of `width`,
/// stored as f32 or, rounded as they are appended, as f16 or bf16 words
/// (kv_cache).
struct CacheDesc {
  std::string name;
  int64_t width = 0;
  int64_t capacity = 0;
  int64_t offset = 0;            ///< bytes from the start of the model's cache memory
  std::string precision = "f32"; ///< "f32", "f16" or "bf16"
  /// A cache bounded by its readers' window (tmk-window-caches): the
  /// positions before a run it keeps; -1 for a cache that keeps every row.
  /// Its memory starts with a header of TMR_RING_HEADER_BYTES (the position
  /// of its first row, runtime/window_cache.cpp), then the rows.
  int64_t keep = -1;
  bool ring() const { return keep >= 0; }
  int64_t elementBytes() const { return precision == "f32" ? 4 : 2; }
  int64_t bytes() const {
    return (ring() ? TMR_RING_HEADER_BYTES : 0) + width * capacity * elementBytes();
  }
  /// Bytes from the model's cache memory to the first row.
  int64_t rowsOffset() const { return offset + (ring() ? TMR_RING_HEADER_BYTES : 0); }
};

struct KernelPlan {
  std::vector<KernelDesc> kernels;
  std::vector<KernelCall> calls;
  std::vector<CacheDesc> caches;
  std::vector<JoinedWeight> joined; ///< Slot::Kind::Joined weights
  int64_t cacheBytes = 0;           ///< all caches together, each starting 64-byte aligned
  /// The most tokens one run of a sequence may carry (tmk.run_chunk: the
  /// model has caches bounded by a window); 0: any up to max_seq. The
  /// executable runs longer ones in consecutive chunks.
  int64_t runChunk = 0;
  int64_t arenaWidth = 0;   ///< arena size in units of T floats
  bool hasEncode = false;   ///< an encoder-decoder model: @encode runs first
  int64_t encodeArenaWidth = 0; ///< @encode's arena in units of S floats
  int64_t outputWidth = 0;
  int64_t outputRows = 0;   ///< 0: one row per token; else a fixed count (classifier: 1)
  /// What the executable needs of the spec beyond the calls: the model's
  /// sizes and names, and its weight manifest (Slot::Kind::Weight indexes it).
  ModelDesc model;
  std::vector<TensorSpec> weights;
  /// Each kernel's schedule on each concrete target the plan is built for
  /// (one, or a multi-ISA target's variants): schedules[v][k] is kernel k's
  /// on scheduleTargets[v] (a Halide target string). Resolved once, by
  /// resolveSchedules (Schedule.h), from the defaults and a tuning database.
  std::vector<std::string> scheduleTargets;
  std::vector<std::vector<Schedule>> schedules;

  /// Kernel `kernel`'s resolved schedule on the concrete target `target`
  /// (one of scheduleTargets; anything else is a programming error).
  const Schedule &schedule(size_t kernel, const TargetInfo &target) const;
};

/// Resolves every kernel's schedule on every concrete target of `target`
/// into `plan` (KernelPlan::schedules): `tuned`'s where it has one (a tuning
/// database's, by scheduleKey), else the default.
void resolveSchedules(KernelPlan &plan, const TargetInfo &target, const ScheduleTable &tuned);

/// The --emit=kernels listing.
void printKernelPlan(const KernelPlan &plan, llvm::raw_ostream &os);

} // namespace tmc
