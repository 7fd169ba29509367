//===- KernelCompiler.cpp - Kernel plan to objects ------------------------===//

#include "compiler/KernelCompiler.h"

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

} // namespace

bool buildKernels(const KernelPlan &plan, const TargetInfo &target,
                  const KernelBuildRequest &request, KernelBuildResult *result,
                  std::string *error) {
  std::ostringstream halideText;
  // Lowers and compiles one pipeline under `name`.
  auto build = [&](const std::string &name, const KernelDesc &kernel, const Schedule &schedule,
                   const TargetInfo &variant,
                   halide::LoweredKernel (*lower)(const KernelDesc &, const Schedule &)) {
    halide::LoweredKernel lowered;
    try {
      lowered = lower(kernel, schedule);
    } catch (const std::exception &e) {
      *error = "lowering kernel " + name + " to Halide failed: " + e.what();
      return false;
    }
    halideText << "\n" << halide::describeKernel(name, lowered, schedule);
    if (!request.compileObjects)
      return true;

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
    std::string halideError;
    if (!halide::compileKernel(lowered, name, variant, outputs, &halideError)) {
      *error = "Halide failed to compile kernel " + name + ": " + halideError;
      return false;
    }
    result->objects.push_back(outputs.object);
    if (!deviceCode.empty())
      result->deviceCode.emplace_back(name, deviceCode);
    if (request.wantStmt)
      result->stmtText += "// kernel " + name + "\n" + readFile(outputs.stmt) + "\n";
    if (request.wantAssembly)
      result->assemblyText += "# kernel " + name + "\n" + readFile(outputs.assembly) + "\n";
    return true;
  };

  // A multi-ISA target compiles every kernel once per variant, each under
  // its own names (tmk_<kernel>_<isa>): the variants' schedules, and so their
  // packed weight layouts, differ, and each variant's executor calls its own.
  const bool multi = !target.variants.empty();
  for (const TargetInfo &variant : target.concreteTargets()) {
    std::string suffix = multi ? std::string("_") + variant.isaName() : "";
    halideText << (multi ? "\n" : "") << "// target: " << variant.halideTarget << "\n";
    for (const KernelDesc &kernel : plan.kernels) {
      Schedule schedule = scheduleFor(kernel, variant, plan.schedules);
      // The decoding step's own variant (T == 1), where the kernel has one.
      const std::string decode = decodeKernelSuffix(kernel, schedule);
      if (kernel.kind == KernelKind::Linear) {
        // The GEMM reads weights packed once, at load, by its pack kernel
        // (the contract is in LowerPack.cpp); both share the schedule.
        if (!build("tmk_" + kernel.name() + suffix, kernel, schedule, variant,
                   halide::lowerPackedLinear) ||
            (!decode.empty() &&
             !build("tmk_" + kernel.name() + suffix + decode, kernel,
                    decodeKernelSchedule(kernel, schedule), variant,
                    halide::lowerPackedLinear)) ||
            !build("tmk_pack_" + kernel.name() + suffix, kernel, schedule, variant,
                   halide::lowerPackWeight))
          return false;
        continue;
      }
      if (!build("tmk_" + kernel.name() + suffix, kernel, schedule, variant, halide::lowerKernel) ||
          (!decode.empty() && !build("tmk_" + kernel.name() + suffix + decode, kernel,
                                     decodeKernelSchedule(kernel, schedule), variant,
                                     halide::lowerKernel)))
        return false;
    }
  }
  result->halideText = halideText.str();
  if (request.compileObjects) {
    std::string runtime = request.workDir + "/halide_runtime.o";
    std::string halideError;
    // One Halide runtime serves every variant: the multi-ISA target names
    // its baseline (AVX2) here, so the runtime runs wherever a variant can.
    if (!halide::compileRuntime(target, runtime, &halideError)) {
      *error = "Halide failed to compile its runtime: " + halideError;
      return false;
    }
    result->objects.push_back(runtime);
  }
  return true;
}

} // namespace tmc
