//===- Target.h - Code generation targets -----------------------*- C++ -*-===//
//
// TargetInfo is the single description of what tmc generates code for: the
// Halide target string, the facts the schedule heuristics need, and how the
// executable is built (system or cross compiler). The tuning database keys
// its entries on a concrete target's Halide target string, so every place
// that needs a target fact reads it from here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace tmc {

/// The instruction sets schedules are written for.
enum class Isa { AVX2, AVX512, NEON };

/// A resolved `--target`. A concrete target has one ISA; `host` on x86 is a
/// multi-ISA target whose `variants` are the concrete targets compiled into
/// one executable (best first), picked at start-up.
struct TargetInfo {
  std::string name;          ///< canonical: x86-64-avx2 | x86-64-avx512 | arm64-linux | host
  std::string halideTarget;  ///< e.g. x86-64-linux-avx-avx2-f16c-fma-sse41
  Isa isa = Isa::AVX2;
  int vectorWidth = 8;       ///< f32 lanes in one vector register
  int vectorRegisters = 16;  ///< architectural vector registers (register tiles)
  /// Empty for a native build; else the GNU triple of the cross toolchain
  /// (aarch64-linux-gnu: aarch64-linux-gnu-g++, a static executable, the
  /// runtime archives of that triple).
  std::string crossTriple;
  /// Multi-ISA (host on x86): one entry per ISA, best first; empty otherwise.
  std::vector<TargetInfo> variants;
  /// AVX-512 with AVX512-BF16 and AVX512-VNNI (Halide's
  /// avx512_sapphirerapids: also VBMI and IFMA, which Zen 4 and Sapphire
  /// Rapids share): bf16 GEMMs multiply with vdpbf16ps, int8 and q4 GEMMs
  /// with vpdpbusd. A variant of `host` only when the plan has bf16, int8 or
  /// q4 kernels (withDotProductVariant); `--target x86-64-avx512-bf16` names
  /// it.
  bool dotProducts = false;
  /// AVX-512 on a CPU that runs each 512-bit operation as two 256-bit halves
  /// (AMD Zen 4: one zmm FMA a cycle where Zen 5 and Intel's server cores
  /// run two). Read off the compiling machine's CPU (hostSplitsZmm) for
  /// every AVX-512 target: schedules whose best register tile differs
  /// between the two kinds of core read it (Schedule.cpp).
  bool splitsZmm = false;
  /// `--target native`: `host` compiled for the one variant this CPU runs
  /// (chosen once the plan's precisions are known: Pipeline.cpp), as
  /// -march=native does: for a machine that runs what it builds.
  bool native = false;
  bool gpu = false;          ///< kernels run on an NVIDIA GPU (Halide's CUDA backend)
  int cudaCapability = 0;    ///< with gpu: the PTX's compute capability (80, 86)

  /// avx2 | avx512 | avx512bf16 | neon: names a variant's symbols and what
  /// executables report.
  const char *isaName() const;
  /// What tuning databases key on: canonical name + Halide target string.
  std::string tuningKey() const { return name + " " + halideTarget; }
  /// The targets kernels are compiled for: the variants, or this target alone.
  std::vector<TargetInfo> concreteTargets() const;
};

/// The names `--target` accepts, for help and error messages.
const char *targetNames();

/// Resolves a `--target` value. `host` on x86-64 is the multi-ISA target
/// (AVX-512 and AVX2 variants, chosen at run time); `native` is `host` marked
/// to keep only the variant this CPU runs. An unknown or unsupported target
/// is a usage error.
llvm::Expected<TargetInfo> resolveTarget(const std::string &name);

/// `host` with an AVX512-BF16/VNNI variant first, for a plan with bf16, int8
/// or q4 kernels (CPUs without them run the AVX-512 or AVX2 variant, as
/// before); any other target unchanged.
TargetInfo withDotProductVariant(const TargetInfo &target);

/// The concrete target a kernel that needs no dot-product instruction (a
/// pack kernel, an attention, a norm: all but the bf16, int8 and q4 GEMMs)
/// compiles for in `variant`: the plain AVX-512 one for the AVX512-BF16/VNNI
/// variant, else `variant`. LLVM's Sapphire Rapids feature set moves 16-bit
/// values (a kv_cache = f16 | bf16 attention's keys, a packed weight's
/// words) through xmm registers with AVX512-FP16's vmovw, which Zen 4 lacks
/// (SIGILL).
TargetInfo withoutDotProducts(const TargetInfo &variant);

/// Whether this machine's CPU runs 512-bit operations as two 256-bit halves
/// (x86 with AVX-512, AMD family 19h: Zen 4; Zen 3, the family's other
/// member, has no AVX-512). TMC_SPLIT_ZMM=0|1 overrides it, for tests and
/// for compiling on one kind of core for the other.
bool hostSplitsZmm();

/// The first of `target`'s concrete targets this machine's CPU can run (for
/// in-process kernel benchmarks; executables choose at start-up themselves).
TargetInfo runnableVariant(const TargetInfo &target);

} // namespace tmc
