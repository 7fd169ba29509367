//===- KernelCompiler.cpp - Kernel plan to objects ------------------------===//

#include "compiler/halide/KernelCompiler.h"

#include "compiler/Error.h"
#include "compiler/halide/AOT.h"
#include "compiler/halide/Lowering.h"

#include <fstream>
#include <sstream>

namespace tmc {

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

using Lower = halide::LoweredKernel (*)(const KernelDesc &, const Schedule &);

/// Lowers and compiles the kernels of a plan, one pipeline at a time.
class KernelBuilder {
public:
  KernelBuilder(const KernelBuildRequest &request, KernelBuildResult &result)
      : request(request), result(result) {}

  /// Lowers `kernel` under `schedule` as the function `name` and, if asked,
  /// compiles it for `variant`.
  llvm::Error build(const std::string &name, const KernelDesc &kernel, const Schedule &schedule,
                    const TargetInfo &variant, Lower lower);

  std::ostringstream halideText;

private:
  const KernelBuildRequest &request;
  KernelBuildResult &result;
};

llvm::Error KernelBuilder::build(const std::string &name, const KernelDesc &kernel,
                                 const Schedule &schedule, const TargetInfo &variant,
                                 Lower lower) {
  halide::LoweredKernel lowered;
  try {
    lowered = lower(kernel, schedule);
  } catch (const std::exception &e) {
    return makeError("lowering kernel " + name + " to Halide failed: " + e.what());
  }
  halideText << "\n" << halide::describeKernel(name, lowered, schedule);
  if (!request.compileObjects)
    return llvm::Error::success();

  halide::KernelOutputs outputs;
  std::string base = request.workDir + "/" + name;
  outputs.object = base + ".o";
  if (request.wantStmt)
    outputs.stmt = base + ".stmt";
  if (request.wantAssembly)
    outputs.assembly = base + ".s";
  std::string deviceCode;
  if (request.wantDevice)
    outputs.deviceCode = &deviceCode;
  if (llvm::Error error = halide::compileKernel(lowered, name, variant, outputs))
    return withContext(std::move(error), "Halide failed to compile kernel " + name);
  result.objects.push_back(outputs.object);
  if (!deviceCode.empty())
    result.deviceCode.emplace_back(name, deviceCode);
  if (request.wantStmt)
    result.stmtText += "// kernel " + name + "\n" + readFile(outputs.stmt) + "\n";
  if (request.wantAssembly)
    result.assemblyText += "# kernel " + name + "\n" + readFile(outputs.assembly) + "\n";
  return llvm::Error::success();
}

} // namespace

llvm::Expected<KernelBuildResult> buildKernels(const KernelPlan &plan, const TargetInfo &target,
                                               const KernelBuildRequest &request) {
  KernelBuildResult result;
  KernelBuilder builder(request, result);
  // A multi-ISA target compiles every kernel once per variant, each under
  // its own names (tmk_<kernel>_<isa>): the variants' schedules, and so their
  // packed weight layouts, differ, and each variant's executor calls its own.
  const bool multi = !target.variants.empty();
  for (const TargetInfo &variant : target.concreteTargets()) {
    std::string suffix = multi ? std::string("_") + variant.isaName() : "";
    builder.halideText << (multi ? "\n" : "") << "// target: " << variant.halideTarget << "\n";
    for (size_t k = 0; k < plan.kernels.size(); ++k) {
      const KernelDesc &kernel = plan.kernels[k];
      const Schedule &schedule = plan.schedule(k, variant);
      std::string name = "tmk_" + kernel.symbol() + suffix;
      // The GEMM reads weights packed once, at load, by its pack kernel (the
      // contract is in LowerPack.cpp); both share the schedule.
      const bool linear = kernel.kind == KernelKind::linear;
      Lower lower = linear ? halide::lowerPackedLinear : halide::lowerKernel;
      const TargetInfo kernelVariant =
          kernel.usesDotProducts() ? variant : withoutDotProducts(variant);
      if (llvm::Error error = builder.build(name, kernel, schedule, kernelVariant, lower))
        return std::move(error);
      // The decoding step's own variant (T == 1), where the kernel has one.
      if (std::string decode = decodeKernelSuffix(kernel, schedule); !decode.empty())
        if (llvm::Error error =
                builder.build(name + decode, kernel, decodeKernelSchedule(kernel, schedule),
                              kernelVariant, lower))
          return std::move(error);
      if (linear)
        if (llvm::Error error =
                builder.build("tmk_pack_" + kernel.symbol() + suffix, kernel, schedule,
                              withoutDotProducts(variant), halide::lowerPackWeight))
          return std::move(error);
      // int8 and q4 weights may come pre-quantized (`tmc quantize`).
      if (linear && kernel.quantized())
        if (llvm::Error error = builder.build("tmk_pack_" + kernel.symbol() + suffix + "_quantized",
                                              kernel, schedule, withoutDotProducts(variant),
                                              halide::lowerPackQuantizedWeight))
          return std::move(error);
    }
  }
  result.halideText = builder.halideText.str();
  if (request.compileObjects) {
    std::string runtime = request.workDir + "/halide_runtime.o";
    // One Halide runtime serves every variant: the multi-ISA target names
    // its baseline (AVX2) here, so the runtime runs wherever a variant can.
    if (llvm::Error error = halide::compileRuntime(target, runtime))
      return withContext(std::move(error), "Halide failed to compile its runtime");
    result.objects.push_back(runtime);
  }
  return std::move(result);
}

} // namespace tmc
