//===- Commands.cpp - Helpers shared by the subcommands of tmc -------------===//

#include "compiler/tools/Commands.h"

#include "compiler/Error.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace tmc::tools {

cl::OptionCategory toolOptions("tmc options");

void releaseGlobalOptions(std::initializer_list<StringRef> names) {
  auto &registered = cl::getRegisteredOptions();
  for (StringRef name : names)
    if (auto it = registered.find(name); it != registered.end())
      it->second->removeArgument();
}

namespace {

/// The name of an option that takes a value and was given more than once, or
/// "". llvm::cl (LLVM 19) lets a cl::opt be given twice and keeps the last
/// value (it has no cl::NotMoreThanOnce): `-o a -o b` would write b only. A
/// compiled model's executable refuses a repeated flag, and so does tmc:
/// every option that takes a value (cl::list ones are ZeroOrMore and may
/// repeat; a repeated boolean switch means the same thing twice).
///
/// The registry also holds libLLVM's own options, objects of a library built
/// without RTTI: the sanitizer build compiles this file without UBSan's vptr
/// check, which cannot recognise them (compiler/tools/CMakeLists.txt).
std::string repeatedValueOption() {
  for (const auto &entry : cl::getRegisteredOptions()) {
    const cl::Option &option = *entry.second;
    cl::NumOccurrencesFlag occurs = option.getNumOccurrencesFlag();
    if (option.getNumOccurrences() > 1 && (occurs == cl::Optional || occurs == cl::Required) &&
        option.getValueExpectedFlag() == cl::ValueRequired)
      return option.ArgStr.str();
  }
  return "";
}

} // namespace

bool parseOptions(int argc, char **argv, const char *overview) {
  cl::HideUnrelatedOptions(toolOptions);
  // With an error stream, llvm::cl reports a bad command line and returns
  // false instead of calling exit(1): tmc exits kExitUsage (2) instead.
  if (!cl::ParseCommandLineOptions(argc, argv, overview, &errs()))
    return false;
  if (std::string name = repeatedValueOption(); !name.empty()) {
    reportError(makeUsageError((name.size() == 1 ? "-" : "--") + name +
                               " given more than once (each flag takes one value)"));
    return false;
  }
  return true;
}

std::string allowedPrecisions() {
  std::string list;
  for (Precision precision : {Precision::F32, Precision::BF16, Precision::Int8, Precision::Q4})
    list += std::string(list.empty() ? "" : ", ") + toString(precision);
  return list;
}

std::string KernelCacheOption::directory() const {
  if (value.getNumOccurrences())
    return value;
  const char *environment = std::getenv("TMC_KERNEL_CACHE");
  return environment ? environment : "";
}

Expected<SpecOverrides> PrecisionOption::overrides() const {
  SpecOverrides overrides;
  // Checked by occurrence, not by emptiness: `--precision=` is a bad value.
  if (value.getNumOccurrences() > 0) {
    overrides.precision = parsePrecision(value);
    if (!overrides.precision)
      return makeUsageError("--precision: unknown precision '" + value +
                            "' (expected one of: " + allowedPrecisions() + ")");
  }
  if (kvCache.getNumOccurrences() > 0) {
    overrides.kvCache = parseCachePrecision(kvCache);
    if (!overrides.kvCache)
      return makeUsageError("--kv-cache: unknown cache precision '" + kvCache +
                            "' (expected one of: f32, f16, bf16)");
  }
  return overrides;
}

std::optional<LoadedSpec> load(const std::string &path, const SpecOverrides &overrides) {
  LoadedSpec loaded = loadSpec(path, errs(), overrides);
  if (!loaded.ok())
    return std::nullopt;
  return loaded;
}

} // namespace tmc::tools
