//===- KernelDesc.h - What one kernel computes, and its buffers -*- C++ -*-===//
//
// The static description of a kernel (its identity: what Halide compiles)
// and the layout of its buffers. Plain data, free of MLIR and Halide, so that
// the plan, the schedules, the Halide lowering and the executor generator
// all share it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "dialects/tmk/KernelKind.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tmc {

/// What a kernel computes: the tmk dialect's enum (TMKOps.td).
using KernelKind = tmk::KernelKind;

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
  double theta = 0;        ///< rope_table
  std::string position;    ///< embed / add_positions: none | sinusoidal | learned
  std::string activation;  ///< linear epilogue or activation kind
  std::string variant;     ///< norm: layernorm | rmsnorm; pool: first | mean
  bool hasBias = false;    ///< linear, norms
  bool hasResidual = false; ///< linear: adds a residual input after the activation
  /// linear: its first ropeColumns outputs (q, or q and k of a fused
  /// projection), in heads of headDim, are turned by rotary positions read
  /// from a rope_table input (tmk-fuse-rope-epilogue); 0 for none.
  int64_t ropeColumns = 0;
  bool hasLength = false;  ///< attention with a padding mask: takes the valid length
  /// embed: how it reads its table: "f32", or the precision its tied head
  /// packs it in ("bf16", "int8", "q4"; tmk-tied-table-precision), each row
  /// looked up dequantized from the head's packed copy.
  /// linear: how the GEMM multiplies, "f32", "bf16" (weights packed as
  /// bf16 pairs, activations rounded to bf16, products summed in f32) or
  /// "int8" (weights and each row of activations quantized, summed in int32)
  /// or "q4" (Q4_0 weights, rows as int8's, blocks of 32 summed in int32).
  std::string precision = "f32";
  /// attention: how the key/value caches it reads store their rows, "f32",
  /// "f16" or "bf16" (kv_cache); it widens each 16-bit element to f32.
  std::string kvPrecision = "f32";
  /// attention: reads keys and values from caches bounded by its window
  /// (tmk-window-caches), whose rows start at a position of their own.
  bool windowKeys = false;
  MaskDesc mask;           ///< attention
  /// A decoding step runs it with one row (tmk-decode-variants): compile a
  /// one-row variant next to the tiled one. Not part of the name.
  bool decodeVariant = true;

  /// The argument of a call that reads a packed weight (LowerPack.cpp's
  /// layouts): a linear's weight (1); a reduced-precision embedding's table
  /// (2), which is its tied head's packed copy, of whatever panel width the
  /// head's schedule gives it; -1 for none.
  int packedArgument() const {
    return kind == KernelKind::linear                        ? 1
           : kind == KernelKind::embed && precision != "f32" ? 2
                                                             : -1;
  }
  /// A linear whose weights are quantized to int8 quads ("int8", "q4"):
  /// packed with row scales, and also packable from a pre-quantized file.
  bool quantized() const { return precision == "int8" || precision == "q4"; }
  /// A GEMM that multiplies in bf16, int8 or q4: the only kernels that need a
  /// dot-product variant's instructions (withoutDotProducts, Target.h).
  bool usesDotProducts() const { return kind == KernelKind::linear && precision != "f32"; }

  /// Unique, stable, readable name: its parameters as a person writes them,
  /// defaults left out (`linear_k64_n128_b_relu`, `rmsnorm_d256_eps1e-06`,
  /// `attention_h8_kv2_d32_c`). What the plan, profiles, reports and the
  /// tuning database show; numbers may hold `.`, `-` and `+`.
  std::string name() const;
  /// name() as a C identifier (`.` `-` `+` spelled `p` `m` `x`:
  /// `rmsnorm_d256_eps1em06`): the compiled kernel's function is
  /// `tmk_<symbol>`. One-to-one with name(): numbers are the only fields
  /// that hold those characters.
  std::string symbol() const;
  /// The name tmc gave this kernel before names were readable (exact
  /// numbers as `9p9999999999999995em07`, every scale spelled out): tuning
  /// databases written then are recognised and reported stale, never misread.
  std::string legacyName() const;
  /// Every field, exactly (numbers in full, doubles as their bits), one
  /// `key=value` a line: what the kernel cache keys a compile job on before
  /// lowering it (KernelCompiler.cpp). Unlike name(), nothing is hashed,
  /// shortened or left out, so two kernels print alike only if they are alike.
  std::string fingerprint() const;

private:
  std::string formatName(bool legacy) const;
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
  bool isBF16 = false; ///< elements are bf16 (a bf16 GEMM's packed weight)
  bool isInt8 = false; ///< elements are int8 (an int8 or q4 GEMM's packed weight)
  /// Elements are 16-bit words holding f16 or bf16 bits (the keys and values
  /// of a kv_cache = f16 | bf16 cache): integer typed, so that no target's
  /// 16-bit float instructions are ever chosen for them (halide/HalfBits.h).
  bool isUInt16 = false;
};

/// Parameters of a kernel in call order; the output is last. Activation
/// rows are kTokens here; a call may bind them to kKeys or a static count.
/// A reduced-precision embedding's table is a packed weight (LowerPack.cpp)
/// of panel width kTablePanelWidth here; the kernel takes any panel width
/// (its head's), from the buffer's extents.
std::vector<BufferShape> kernelSignature(const KernelDesc &kernel);
inline constexpr int kTablePanelWidth = 16;

} // namespace tmc
