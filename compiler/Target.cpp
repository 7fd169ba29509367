//===- Target.cpp - Code generation targets -------------------------------===//

#include "compiler/Target.h"

#include "compiler/Error.h"

#include "Halide.h"

#include <cstdlib>

namespace tmc {

namespace {

constexpr const char *kAvx2 = "x86-64-linux-avx-avx2-f16c-fma-sse41";
constexpr const char *kAvx512 = "x86-64-linux-avx-avx2-f16c-fma-sse41-avx512-avx512_skylake";
// The only Halide 14 feature that enables vdpbf16ps (no Zen 4 feature exists);
// no AMX or FP16 instruction appears unless a kernel asks for one.
constexpr const char *kAvx512Bf16 =
    "x86-64-linux-avx-avx2-f16c-fma-sse41-avx512-avx512_skylake-avx512_cannonlake-"
    "avx512_sapphirerapids";
// NEON is part of every AArch64 CPU. No dot-product feature: Halide 14's
// sdot/udot multiply like-signed bytes, and int8 GEMMs multiply u8 x s8
// (usdot, i8mm, which Halide 14 does not emit); bf16 is widened in software.
constexpr const char *kArm64 = "arm-64-linux";

TargetInfo concrete(const std::string &name, const char *halideTarget, Isa isa) {
  TargetInfo info;
  info.name = name;
  info.halideTarget = Halide::Target(halideTarget).to_string();
  info.isa = isa;
  switch (isa) {
  case Isa::AVX2: info.vectorWidth = 8, info.vectorRegisters = 16; break;
  case Isa::AVX512:
    info.vectorWidth = 16, info.vectorRegisters = 32;
    info.splitsZmm = hostSplitsZmm();
    break;
  case Isa::NEON: info.vectorWidth = 4, info.vectorRegisters = 32; break;
  }
  return info;
}

/// `cuda` (PTX for compute capability 8.0, which the driver also JIT-compiles
/// for newer GPUs such as sm_90) and `cuda-sm86`. Host code (packing weights,
/// launching kernels) is built for x86-64 with AVX2, which every machine with
/// such a GPU has, not for the compiling machine's CPU.
std::optional<TargetInfo> resolveCudaTarget(const std::string &name) {
  int capability = name == "cuda" ? 80 : name == "cuda-sm86" ? 86 : 0;
  if (!capability)
    return std::nullopt;
  Halide::Target target(std::string(kAvx2) + "-cuda");
  target = target.with_feature(capability == 80 ? Halide::Target::CUDACapability80
                                                : Halide::Target::CUDACapability86);
  TargetInfo info = concrete(name, kAvx2, Isa::AVX2);
  info.halideTarget = target.to_string();
  info.gpu = true;
  info.cudaCapability = capability;
  return info;
}

} // namespace

const char *TargetInfo::isaName() const {
  if (!variants.empty())
    return "multi";
  switch (isa) {
  case Isa::AVX2: return "avx2";
  case Isa::AVX512: return dotProducts ? "avx512bf16" : "avx512";
  case Isa::NEON: return "neon";
  }
  return "";
}

std::vector<TargetInfo> TargetInfo::concreteTargets() const {
  return variants.empty() ? std::vector<TargetInfo>{*this} : variants;
}

const char *targetNames() {
  return "host, native, x86-64-avx2, x86-64-avx512, x86-64-avx512-bf16, arm64-linux, cuda, "
         "cuda-sm86";
}

llvm::Expected<TargetInfo> resolveTarget(const std::string &name) {
  if (name == "x86-64-avx2")
    return concrete(name, kAvx2, Isa::AVX2);
  if (name == "x86-64-avx512")
    return concrete(name, kAvx512, Isa::AVX512);
  if (name == "x86-64-avx512-bf16") {
    TargetInfo info = concrete(name, kAvx512Bf16, Isa::AVX512);
    info.dotProducts = true;
    return info;
  }
  if (name == "arm64-linux") {
    TargetInfo info = concrete(name, kArm64, Isa::NEON);
    info.crossTriple = "aarch64-linux-gnu";
    return info;
  }
  if (std::optional<TargetInfo> cuda = resolveCudaTarget(name))
    return *cuda;
  if (name != "host" && name != "native")
    return makeUsageError("--target: unknown target '" + name + "' (expected one of: " +
                          targetNames() + ")");
  Halide::Target host = Halide::get_host_target();
  if (host.os != Halide::Target::Linux || host.arch != Halide::Target::X86 || host.bits != 64)
    return makeUsageError("--target " + name +
                          ": only 64-bit x86 Linux hosts are supported (found " + host.to_string() +
                          "); name a target instead");
  // The executable may run on another x86 machine than the compiler: it
  // carries both variants and picks one at start-up (runtime dispatch in the
  // generated executor, TMC_ISA to force one). `native` keeps only the
  // variant this CPU runs, once the plan's precisions are known.
  TargetInfo info;
  info.name = "host";
  info.native = name == "native";
  info.variants = {concrete("x86-64-avx512", kAvx512, Isa::AVX512),
                   concrete("x86-64-avx2", kAvx2, Isa::AVX2)};
  // The Halide runtime is compiled once, for the baseline variant.
  info.halideTarget = info.variants.back().halideTarget;
  info.isa = info.variants.back().isa;
  info.vectorWidth = info.variants.back().vectorWidth;
  info.vectorRegisters = info.variants.back().vectorRegisters;
  return info;
}

TargetInfo withDotProductVariant(const TargetInfo &target) {
  if (target.name != "host" || target.variants.empty() || target.variants.front().dotProducts)
    return target;
  TargetInfo out = target;
  out.variants.insert(out.variants.begin(), llvm::cantFail(resolveTarget("x86-64-avx512-bf16")));
  return out;
}

TargetInfo withoutDotProducts(const TargetInfo &variant) {
  if (!variant.dotProducts || variant.isa != Isa::AVX512)
    return variant;
  return llvm::cantFail(resolveTarget("x86-64-avx512"));
}

bool hostSplitsZmm() {
  static const bool splits = [] {
    if (const char *flag = std::getenv("TMC_SPLIT_ZMM"); flag && flag[0])
      return flag[0] == '1';
#if defined(__x86_64__)
    // libgcc's CPU model: the type is AMDFAM19H for the whole family.
    __builtin_cpu_init();
    return __builtin_cpu_is("amdfam19h") && __builtin_cpu_supports("avx512f");
#else
    return false;
#endif
  }();
  return splits;
}

TargetInfo runnableVariant(const TargetInfo &target) {
  Halide::Target host = Halide::get_host_target();
  for (const TargetInfo &variant : target.concreteTargets()) {
    Halide::Target t(variant.halideTarget);
    bool runs = t.arch == host.arch && t.bits == host.bits;
    for (int f = 0; runs && f < Halide::Target::FeatureEnd; ++f) {
      auto feature = static_cast<Halide::Target::Feature>(f);
      runs = !t.has_feature(feature) || host.has_feature(feature);
    }
    if (runs)
      return variant;
  }
  return target.concreteTargets().back();
}

} // namespace tmc
