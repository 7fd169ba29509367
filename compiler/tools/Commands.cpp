//===- Commands.cpp - Helpers shared by the subcommands of tmc -------------===//

#include "compiler/tools/Commands.h"

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

bool parseOptions(int argc, char **argv, const char *overview) {
  cl::HideUnrelatedOptions(toolOptions);
  // With an error stream, llvm::cl reports a bad command line and returns
  // false instead of calling exit(1): tmc exits kExitUsage (2) instead.
  return cl::ParseCommandLineOptions(argc, argv, overview, &errs());
}

std::optional<LoadedSpec> load(const std::string &path) {
  LoadedSpec loaded = loadSpec(path, errs());
  if (!loaded.ok())
    return std::nullopt;
  return loaded;
}

} // namespace tmc::tools
