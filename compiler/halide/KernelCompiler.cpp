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
  halideText << "// target: " << target.halideTarget << "\n";
  for (const KernelDesc &kernel : plan.kernels) {
    std::string name = "tmk_" + kernel.name();
    Schedule schedule = defaultSchedule(kernel, target);
    halide::LoweredKernel lowered;
    try {
      lowered = halide::lowerKernel(kernel, schedule);
    } catch (const std::exception &e) {
      *error = "lowering kernel " + name + " to Halide failed: " + e.what();
      return false;
    }
    halideText << "\n" << halide::describeKernel(name, lowered, schedule);
    if (!request.compileObjects)
      continue;

    halide::KernelOutputs outputs;
    std::string base = request.workDir + "/" + name;
    outputs.object = base + ".o";
    if (request.wantStmt)
      outputs.stmt = base + ".stmt";
    if (request.wantAssembly)
      outputs.assembly = base + ".s";
    std::string halideError;
    if (!halide::compileKernel(lowered, name, target, outputs, &halideError)) {
      *error = "Halide failed to compile kernel " + name + ": " + halideError;
      return false;
    }
    result->objects.push_back(outputs.object);
    if (request.wantStmt)
      result->stmtText += "// kernel " + name + "\n" + readFile(outputs.stmt) + "\n";
    if (request.wantAssembly)
      result->assemblyText += "# kernel " + name + "\n" + readFile(outputs.assembly) + "\n";
  }
  result->halideText = halideText.str();
  if (request.compileObjects) {
    std::string runtime = request.workDir + "/halide_runtime.o";
    std::string halideError;
    if (!halide::compileRuntime(target, runtime, &halideError)) {
      *error = "Halide failed to compile its runtime: " + halideError;
      return false;
    }
    result->objects.push_back(runtime);
  }
  return true;
}

} // namespace tmc
