//===- Target.cpp - Code generation targets -------------------------------===//

#include "compiler/Target.h"

#include "Halide.h"

namespace tmc {

const char *targetNames() { return "host, x86-64-avx2, x86-64-avx512, cuda, cuda-sm86"; }

namespace {

/// `cuda` (PTX for compute capability 8.0, which the driver also JIT-compiles
/// for newer GPUs such as sm_90) and `cuda-sm86`. Host code (packing weights,
/// launching kernels) is built for x86-64 with AVX2, which every machine with
/// such a GPU has, not for the compiling machine's CPU.
std::optional<TargetInfo> resolveCudaTarget(const std::string &name) {
  int capability = name == "cuda" ? 80 : name == "cuda-sm86" ? 86 : 0;
  if (!capability)
    return std::nullopt;
  Halide::Target target("x86-64-linux-avx-avx2-f16c-fma-sse41-cuda");
  target = target.with_feature(capability == 80 ? Halide::Target::CUDACapability80
                                                : Halide::Target::CUDACapability86);
  TargetInfo info;
  info.name = name;
  info.halideTarget = target.to_string();
  info.vectorWidth = 8;
  info.gpu = true;
  info.cudaCapability = capability;
  return info;
}

} // namespace

std::optional<TargetInfo> resolveTarget(const std::string &name, std::string *error) {
  if (std::optional<TargetInfo> cuda = resolveCudaTarget(name))
    return cuda;
  Halide::Target target;
  if (name == "host") {
    target = Halide::get_host_target();
  } else if (name == "x86-64-avx2") {
    target = Halide::Target("x86-64-linux-avx-avx2-f16c-fma-sse41");
  } else if (name == "x86-64-avx512") {
    target = Halide::Target("x86-64-linux-avx-avx2-f16c-fma-sse41-avx512-avx512_skylake");
  } else if (name == "arm64-linux") {
    *error = "--target " + name + " is not supported yet by this version of tmc (supported: " +
             targetNames() + ")";
    return std::nullopt;
  } else {
    *error = "--target: unknown target '" + name + "' (expected one of: " + targetNames() + ")";
    return std::nullopt;
  }
  if (target.os != Halide::Target::Linux || target.arch != Halide::Target::X86 ||
      target.bits != 64) {
    *error = "--target " + name + ": only 64-bit x86 Linux hosts are supported yet (found " +
             target.to_string() + ")";
    return std::nullopt;
  }
  TargetInfo info;
  info.name = name;
  info.halideTarget = target.to_string();
  info.vectorWidth = target.has_feature(Halide::Target::AVX512) ? 16
                     : target.has_feature(Halide::Target::AVX) ? 8
                                                                : 4;
  return info;
}

} // namespace tmc
