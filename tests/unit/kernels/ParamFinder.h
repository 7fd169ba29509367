//===- ParamFinder.h - The Parameters a Halide pipeline reads ---*- C++ -*-===//
//
// Shared by the kernel tests: LoweredKernel carries only its Arguments, and
// JIT realization needs the Parameter objects (buffers and scalars); and the
// targets the tests compile for, which this CPU may not run.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelDesc.h"
#include "compiler/Target.h"

#include "Halide.h"

#include <map>
#include <optional>
#include <string>

namespace tmc::test {

/// Every Parameter (buffers and scalars) the pipeline reads, by name.
class ParamFinder : public Halide::Internal::IRGraphVisitor {
public:
  std::map<std::string, Halide::Internal::Parameter> params;

private:
  using IRGraphVisitor::visit;
  void visit(const Halide::Internal::Call *op) override {
    if (op->param.defined())
      params[op->param.name()] = op->param;
    IRGraphVisitor::visit(op);
  }
  void visit(const Halide::Internal::Variable *op) override {
    if (op->param.defined())
      params[op->param.name()] = op->param;
  }
};

/// Every Parameter of `out` and of the Funcs it calls, by name.
inline std::map<std::string, Halide::Internal::Parameter> findParams(const Halide::Func &out) {
  ParamFinder finder;
  out.function().accept(&finder);
  for (auto &[name, fn] : Halide::Internal::find_transitive_calls(out.function()))
    fn.accept(&finder);
  return finder.params;
}

/// A linear kernel of K inputs and N outputs (the rest of its fields default).
inline KernelDesc linearKernel(int64_t K, int64_t N, bool bias, const std::string &activation,
                               const std::string &precision = "f32") {
  KernelDesc desc;
  desc.kind = KernelKind::linear;
  desc.inWidth = K;
  desc.width = N;
  desc.hasBias = bias;
  desc.activation = activation;
  desc.precision = precision;
  return desc;
}

/// A test's target: tmc's description of `name` (absent with `error` when it
/// does not resolve) and its Halide target; `runsHere` is false when this CPU
/// cannot run the code (AVX-512 on an AVX2-only CPU): the test skips.
struct TestTarget {
  std::optional<TargetInfo> info;
  std::string error;
  Halide::Target halide;
  bool runsHere = false;
};

/// A gtest parameter name for (target, case): `x86_64_avx2_<case name>`.
template <typename Info> std::string targetCaseName(const Info &info) {
  std::string target = std::get<0>(info.param);
  for (char &ch : target)
    if (ch == '-')
      ch = '_';
  return target + "_" + std::get<1>(info.param).name;
}

inline TestTarget testTarget(const std::string &name) {
  TestTarget t;
  llvm::Expected<TargetInfo> info = resolveTarget(name);
  if (!info) {
    t.error = llvm::toString(info.takeError());
    return t;
  }
  t.info = std::move(*info);
  t.halide = Halide::Target(t.info->halideTarget);
  // Runs here when this CPU has every feature the target assumes (AVX-512,
  // and AVX512-BF16 for x86-64-avx512-bf16).
  Halide::Target host = Halide::get_host_target();
  t.runsHere = true;
  for (int f = 0; f < Halide::Target::FeatureEnd; ++f) {
    auto feature = static_cast<Halide::Target::Feature>(f);
    t.runsHere = t.runsHere && (!t.halide.has_feature(feature) || host.has_feature(feature));
  }
  return t;
}

} // namespace tmc::test
