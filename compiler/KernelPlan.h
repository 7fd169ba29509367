//===- KernelPlan.h - From fused tm ops to kernel calls ---------*- C++ -*-===//
//
// The `kernels` stage: every op left after fusion becomes one call of one
// kernel. Calls whose ops agree on kind and static shape share a kernel (the
// layers of a stack compile once). Values get arena offsets from their live
// ranges. The tmk passes (dialects/tmk) decide all of this on the kernel-level
// IR; formKernels reads their result into this plan. The plan is plain data
// with no MLIR or Halide types, so that the Halide lowering and the executor
// generator both read it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/Schedule.h"

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
  AddSegments,
  Linear,
  Attention,
  Add,
  Activation,
  GatedActivation,
  Norm,
  AddNorm,
  Rope,
  Pool,
  SeqProject,
};

/// An attention mask as the kernel needs it (see tm::MaskAttr).
struct MaskDesc {
  bool causal = false, padding = false, decoder = false, alibi = false;
  int64_t window = 0, dilated = 0, dilation = 1;
  std::vector<int64_t> globals;
  int64_t randomPerRow = 0;
  uint64_t randomSeed = 0;
  int64_t maxSeq = 0;

  bool restricted() const {
    return window > 0 || dilated > 0 || !globals.empty() || randomPerRow > 0;
  }
};

/// The static description of one kernel: what Halide compiles.
struct KernelDesc {
  KernelKind kind;
  int64_t width = 0;       ///< output features (d_model, N of a linear, heads*head_dim)
  int64_t inWidth = 0;     ///< linear: K
  int64_t tableRows = 0;   ///< embed: vocab
  int64_t positionRows = 0; ///< learned positions: rows of the table (max_seq); segments: rows
  int64_t heads = 0, kvHeads = 0, headDim = 0;
  double scale = 1.0;      ///< embed: embedding scale; attention: score scale
  double eps = 0;          ///< norms
  double theta = 0;        ///< rope
  std::string position;    ///< embed / add_positions: none | sinusoidal | learned
  std::string activation;  ///< linear epilogue or activation kind
  std::string variant;     ///< norm: layernorm | rmsnorm; pool: first | mean
  bool hasBias = false;    ///< linear, norms
  bool hasResidual = false; ///< linear: adds a residual input after the activation
  bool hasLength = false;  ///< attention with a padding mask: takes the valid length
  MaskDesc mask;           ///< attention
  /// A decoding step runs it with one row (tmk-decode-variants): compile a
  /// one-row variant next to the tiled one. Not part of the name.
  bool decodeVariant = true;

  /// Unique, C-identifier-safe name, e.g. `linear_k64_n128_b_relu`.
  std::string name() const;
};

/// How an executor argument is laid out: Halide dimensions, innermost first.
/// Row extents are symbolic: kTokens (this run's tokens) or kKeys (the tokens
/// cached so far plus this run's). A scalar is an int32 with no extents.
struct BufferShape {
  static constexpr int64_t kTokens = -1;
  static constexpr int64_t kKeys = -2;
  static constexpr int64_t kSource = -3; ///< the encoder's source tokens
  bool isInt32 = false;
  bool isScalar = false;
  std::vector<int64_t> extents;
};

/// Parameters of a kernel in call order; the output is last. Activation
/// rows are kTokens here; a call may bind them to kKeys or a static count.
std::vector<BufferShape> kernelSignature(const KernelDesc &kernel);

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
  int64_t width = 0;  ///< floats per row (Arena / Output / Cache)
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
};

/// One key or value cache of a decoder layer: `capacity` rows of `width`.
struct CacheDesc {
  std::string name;
  int64_t width = 0;
  int64_t capacity = 0;
  int64_t offset = 0;  ///< floats from the start of the model's cache memory
};

struct KernelPlan {
  std::vector<KernelDesc> kernels;
  std::vector<KernelCall> calls;
  std::vector<CacheDesc> caches;
  std::vector<JoinedWeight> joined; ///< Slot::Kind::Joined weights
  int64_t cacheFloats = 0;  ///< all caches together
  int64_t arenaWidth = 0;   ///< arena size in units of T floats
  bool hasEncode = false;   ///< an encoder-decoder model: @encode runs first
  int64_t encodeArenaWidth = 0; ///< @encode's arena in units of S floats
  int64_t outputWidth = 0;
  int64_t outputRows = 0;   ///< 0: one row per token; else a fixed count (classifier: 1)
  ScheduleTable schedules;  ///< tuned schedules by kernel name (--tuning-db); others default
};

/// Reads the plan from a module the kernel pipeline (tmk::buildKernelPipeline)
/// has run on: @encode (if any), then @forward. `manifest` gives each weight
/// name its index. Fails (with an MLIR diagnostic) on an op it cannot map.
/// With `explain`, every op also gets a remark naming the kernel it runs as.
mlir::FailureOr<KernelPlan> formKernels(mlir::ModuleOp module,
                                        const std::vector<std::string> &manifest,
                                        bool explain = false);

/// The --emit=kernels listing.
void printKernelPlan(const KernelPlan &plan, llvm::raw_ostream &os);

} // namespace tmc
