//===- ParamFinder.h - The Parameters a Halide pipeline reads ---*- C++ -*-===//
//
// Shared by the kernel tests: LoweredKernel carries only its Arguments, and
// JIT realization needs the Parameter objects (buffers and scalars); the
// targets the tests compile for, which this CPU may not run; and what the
// reduced-precision GEMM tests share (random inputs, realizing by name, cases).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelDesc.h"
#include "compiler/Target.h"
#include "compiler/halide/Lowering.h"

#include "Halide.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

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

/// Realizes `kernel` with its inputs bound by name into `output`. The JIT
/// code is kept in `kernel.output`'s pipeline: later calls with other inputs
/// or token counts reuse it (a Func copied per call compiled anew each time,
/// seconds per call under ASan).
inline void realizeWith(halide::LoweredKernel &kernel, const Halide::Target &target,
                        const std::map<std::string, Halide::Buffer<>> &inputs,
                        Halide::Buffer<> output) {
  std::map<std::string, Halide::Internal::Parameter> params = findParams(kernel.output);
  for (const Halide::Argument &arg : kernel.arguments) {
    auto param = params.find(arg.name);
    auto input = inputs.find(arg.name);
    ASSERT_TRUE(param != params.end() && input != inputs.end()) << arg.name;
    param->second.set_buffer(input->second);
  }
  kernel.output.realize(output, target);
}

/// The same for a kernel realized once.
inline void realizeWith(halide::LoweredKernel &&kernel, const Halide::Target &target,
                        const std::map<std::string, Halide::Buffer<>> &inputs,
                        Halide::Buffer<> output) {
  realizeWith(kernel, target, inputs, output);
}

/// Expects every row t of `y`, the output of `kernel` over the tokens
/// inputs["x"] (K x T; and its rope_table rows, if any), to be bit for bit
/// the row the same kernel computes for token row t alone (T = 1: the GEMMs'
/// decoding branch). A batched
/// decoding step promises each sequence the outputs it gets on its own.
inline void expectRowsMatchAlone(halide::LoweredKernel &kernel, const Halide::Target &target,
                                 std::map<std::string, Halide::Buffer<>> inputs,
                                 const Halide::Buffer<float> &y, const std::string &what) {
  Halide::Buffer<float> x = inputs.at("x");
  const int K = x.dim(0).extent(), T = x.dim(1).extent(), N = y.dim(0).extent();
  int differing = 0;
  // A rotary epilogue's table rows go with their token rows.
  std::optional<Halide::Buffer<float>> table;
  if (auto it = inputs.find("rope_table"); it != inputs.end())
    table = Halide::Buffer<float>(it->second);
  for (int t = 0; T > 1 && t < T; ++t) {
    Halide::Buffer<float> row(K, 1);
    row.for_each_element([&](int k, int) { row(k, 0) = x(k, t); });
    inputs["x"] = row;
    if (table) {
      Halide::Buffer<float> tableRow(table->dim(0).extent(), 1);
      tableRow.for_each_element([&](int c, int) { tableRow(c, 0) = (*table)(c, t); });
      inputs["rope_table"] = tableRow;
    }
    Halide::Buffer<float> alone(N, 1);
    realizeWith(kernel, target, inputs, alone);
    for (int n = 0; n < N; ++n)
      if (alone(n, 0) != y(n, t) && differing++ < 3)
        ADD_FAILURE() << what << ": row " << t << " of T=" << T << ", column " << n << ": "
                      << alone(n, 0) << " alone, " << y(n, t) << " in the call";
  }
}

/// Values uniform in [-1, 1].
inline Halide::Buffer<float> randomBuffer(std::vector<int> extents, std::mt19937 &rng) {
  Halide::Buffer<float> buffer(extents);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  buffer.for_each_value([&](float &v) { v = dist(rng); });
  return buffer;
}

/// A reduced-precision GEMM case: shape, epilogue and the schedule knobs
/// that change its loops.
struct ReducedGemmCase {
  const char *name;
  int64_t K, N;
  bool bias;
  const char *activation;
  int unrollK = 1;
  bool parallelRows = false;
  bool zeroChannel = false; ///< int8: channel 0 all zeros (scale 0)
  int tokenBlock = -1;      ///< -1: the default's
  /// Non-null: the one target the case runs on (each JIT compilation costs
  /// about 15 s under ASan).
  const char *onlyTarget = nullptr;
};

inline void PrintTo(const ReducedGemmCase &c, std::ostream *os) { *os << c.name; }

/// A reduced-precision case's seeded inputs: the weight (k, n) and bias (n),
/// channel 0 all zeros when the case asks, and the generator the tokens are
/// drawn from next.
struct ReducedGemmInputs {
  std::mt19937 rng;
  Halide::Buffer<float> weight, bias;
};

inline ReducedGemmInputs reducedGemmInputs(const ReducedGemmCase &c) {
  const int K = static_cast<int>(c.K), N = static_cast<int>(c.N);
  ReducedGemmInputs in{std::mt19937(static_cast<unsigned>(K * 1000 + N)), {}, {}};
  in.weight = randomBuffer({K, N}, in.rng);
  in.bias = randomBuffer({N}, in.rng);
  if (c.zeroChannel)
    for (int k = 0; k < K; ++k)
      in.weight(k, 0) = 0.0f;
  return in;
}

/// Tokens (k, t) whose rows lie 2^-8 to 2^8 apart in magnitude: with one
/// scale for all, the small rows' quantized values would be zero.
inline Halide::Buffer<float> spreadTokens(int K, int T, std::mt19937 &rng) {
  Halide::Buffer<float> x = randomBuffer({K, T}, rng);
  for (int t = 0; t < T; ++t)
    for (int k = 0; k < K; ++k)
      x(k, t) *= std::ldexp(1.0f, (t % 17) - 8);
  return x;
}

/// Line `index` of a (k, index) buffer: a weight's channel or a token row.
inline std::vector<float> lineOf(const Halide::Buffer<float> &buffer, int index) {
  std::vector<float> line(buffer.dim(0).extent());
  for (size_t k = 0; k < line.size(); ++k)
    line[k] = buffer(static_cast<int>(k), index);
  return line;
}

/// One row quantized as docs/spec-language.md's int8 contract says (q4's
/// activations too), in f32: symmetric, round half even.
struct QuantizedRow {
  std::vector<int> values;
  float scale = 0;
};

inline QuantizedRow quantizeRow(const std::vector<float> &row) {
  float absMax = 0;
  for (float v : row)
    absMax = std::max(absMax, std::fabs(v));
  const float inverse = absMax > 0 ? 127.0f / absMax : 0.0f;
  QuantizedRow q;
  q.scale = absMax / 127.0f;
  for (float v : row)
    q.values.push_back(static_cast<int>(std::clamp(std::nearbyint(v * inverse), -127.0f, 127.0f)));
  return q;
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

/// Whether this CPU runs code for tmc's target `name` (false when the name
/// does not resolve).
inline bool targetRunsHere(const std::string &name) {
  TestTarget t = testTarget(name);
  return t.info && t.runsHere;
}

/// The targets a kernel suite runs each case on. The main build runs every
/// one. The sanitizer build (TMC_SANITIZED) runs one: what ASan and UBSan
/// watch there is the lowering code, the same C++ for every target, while
/// the kernels are Halide's uninstrumented machine code, which the main
/// build checks value by value on every target; and each JIT compilation
/// costs about 15 s instrumented (261 of them took most of sanitize-unit's 21 minutes).
/// The one kept is the richest this CPU runs: the last of `targets` that
/// runs here (the first when none does; its tests then skip).
inline std::vector<std::string> suiteTargets(const std::vector<std::string> &targets) {
#ifdef TMC_SANITIZED
  for (auto it = targets.rbegin(); it != targets.rend(); ++it)
    if (targetRunsHere(*it))
      return {*it};
  return {targets.front()};
#else
  return targets;
#endif
}

/// The (target, case) pairs of a suite: each case on suiteTargets(targets),
/// or on its own `onlyTarget` alone when it names one.
template <typename Case, size_t N>
std::vector<std::tuple<std::string, Case>> targetCases(const std::vector<std::string> &targets,
                                                       const Case (&cases)[N]) {
  std::vector<std::tuple<std::string, Case>> pairs;
  const std::vector<std::string> kept = suiteTargets(targets);
  for (const Case &c : cases) {
    if constexpr (requires { c.onlyTarget; }) {
      if (c.onlyTarget) {
        pairs.emplace_back(c.onlyTarget, c);
        continue;
      }
    }
    for (const std::string &target : kept)
      pairs.emplace_back(target, c);
  }
  return pairs;
}

} // namespace tmc::test
