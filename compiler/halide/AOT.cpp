//===- AOT.cpp - Ahead-of-time compilation of Halide kernels --------------===//

#include "compiler/halide/AOT.h"

#include "compiler/Error.h"

#include <cstring>
#include <map>
#include <sstream>

using namespace Halide;

namespace tmc::halide {

namespace {

Target kernelTarget(const TargetInfo &info) {
  // One runtime object serves every kernel of the executable.
  return Target(info.halideTarget).with_feature(Target::NoRuntime);
}

template <typename Fn> llvm::Error catchHalide(Fn &&fn) {
  try {
    fn();
    return llvm::Error::success();
  } catch (const Halide::Error &e) {
    return makeError(e.what());
  } catch (const std::exception &e) {
    return makeError(e.what());
  }
}

void printDefinition(std::ostream &os, const std::string &name,
                     const std::vector<Expr> &args, const std::vector<Expr> &values,
                     const char *op) {
  os << "  " << name << "(";
  for (size_t i = 0; i < args.size(); ++i)
    os << (i ? ", " : "") << args[i];
  os << ") " << op << " ";
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? ", " : "") << values[i];
  os << "\n";
}

} // namespace

llvm::Error compileKernel(const LoweredKernel &kernel, const std::string &functionName,
                          const TargetInfo &target, const KernelOutputs &outputs) {
  std::map<OutputFileType, std::string> files;
  if (!outputs.object.empty())
    files[OutputFileType::object] = outputs.object;
  if (!outputs.stmt.empty())
    files[OutputFileType::stmt] = outputs.stmt;
  if (!outputs.assembly.empty())
    files[OutputFileType::assembly] = outputs.assembly;
  return catchHalide([&] {
    Func output = kernel.output;
    Module module =
        output.compile_to_module(kernel.arguments, functionName, kernelTarget(target));
    // A GPU target's device code is a buffer of the module (embedded in
    // the object's read-only data): PTX text, NUL-terminated.
    for (const Buffer<void> &buffer : module.buffers()) {
      if (!outputs.deviceCode || buffer.name().find("_gpu_source_kernels") == std::string::npos)
        continue;
      const char *text = static_cast<const char *>(buffer.data());
      *outputs.deviceCode += std::string(text, strnlen(text, buffer.size_in_bytes()));
    }
    module.compile(files);
  });
}

llvm::Error compileRuntime(const TargetInfo &target, const std::string &objectPath) {
  return catchHalide(
      [&] { compile_standalone_runtime(objectPath, Target(target.halideTarget)); });
}

std::string describeKernel(const std::string &name, const LoweredKernel &kernel,
                           const Schedule &schedule) {
  std::ostringstream os;
  os << "kernel " << name << "(";
  for (size_t i = 0; i < kernel.arguments.size(); ++i)
    os << (i ? ", " : "") << kernel.arguments[i].name;
  os << ") -> " << kernel.output.name() << "\n";
  os << "  schedule: " << schedule.str() << "\n";
  for (const Func &stage : kernel.stages) {
    Func f = stage;
    std::vector<Expr> args;
    for (const Var &v : f.args())
      args.push_back(v);
    // Tuple-valued Funcs (the online softmax's state) print every element.
    printDefinition(os, f.name(), args, f.values().as_vector(), "=");
    for (int u = 0; u < f.num_update_definitions(); ++u)
      printDefinition(os, f.name(), f.update_args(u), f.update_values(u).as_vector(), "<-");
  }
  return os.str();
}

} // namespace tmc::halide
