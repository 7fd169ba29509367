//===- Target.h - Code generation targets -----------------------*- C++ -*-===//
#pragma once

#include <optional>
#include <string>

namespace tmc {

/// A resolved `--target`: the name the user gave, the Halide target string the
/// kernels compile for, and the facts the schedule heuristics need.
struct TargetInfo {
  std::string name;          ///< host | x86-64-avx2 | x86-64-avx512
  std::string halideTarget;  ///< e.g. x86-64-linux-avx-avx2-f16c-fma-sse41
  int vectorWidth = 8;       ///< f32 lanes in one vector register
  bool gpu = false;          ///< kernels run on an NVIDIA GPU (Halide's CUDA backend)
  int cudaCapability = 0;    ///< with gpu: the PTX's compute capability (80, 86)
};

/// The names `--target` accepts, for help and error messages.
const char *targetNames();

/// Resolves a `--target` value; `host` detects the running CPU's features.
std::optional<TargetInfo> resolveTarget(const std::string &name, std::string *error);

} // namespace tmc
