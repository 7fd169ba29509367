//===- ImportCommand.cpp - `tmc import` ------------------------------------===//
//
// Writes the spec of a Hugging Face model folder (frontend/HfImport.h),
// checked by the frontend before anything is written, so that a config the
// importer mistranslated can never leave a spec that does not compile.
//
//===----------------------------------------------------------------------===//

#include "compiler/Error.h"
#include "compiler/Toolchain.h"
#include "compiler/tools/Commands.h"
#include "frontend/HfImport.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace tmc::tools {

int importCommand(int argc, char **argv) {
  releaseGlobalOptions({"o", "max-seq", "name"});
  cl::opt<std::string> folder(cl::Positional, cl::Required,
                              cl::desc("DIR: a Hugging Face model folder (config.json and the "
                                       "safetensors weights)"),
                              cl::cat(toolOptions));
  cl::opt<std::string> output("o", cl::desc("Output spec (default: standard output)"),
                              cl::value_desc("MODEL.tm"), cl::cat(toolOptions));
  cl::opt<int64_t> maxSeq("max-seq",
                          cl::desc("The longest sequence the executable accepts, 1 to the "
                                   "config's max_position_embeddings (default: that)"),
                          cl::value_desc("N"), cl::init(0), cl::cat(toolOptions));
  cl::opt<std::string> name("name", cl::desc("The spec's model name (default: the folder's)"),
                            cl::value_desc("NAME"), cl::cat(toolOptions));
  if (!parseOptions(argc, argv,
                    "tmc import: write the spec of a Hugging Face model folder, whose weights "
                    "the compiled executable then reads as they are\n"))
    return kExitUsage;
  if (maxSeq.getNumOccurrences() && maxSeq < 1)
    return reportError(
        makeUsageError("--max-seq: expected an integer >= 1, got " + std::to_string(maxSeq)));
  if (!sys::fs::is_directory(folder))
    return reportError(makeUsageError(folder + ": not a directory; tmc import reads a Hugging "
                                               "Face model folder (config.json, safetensors)"));
  if (!output.empty()) {
    if (Error error = checkNotAnInput("-o", output, {{"the config", folder + "/config.json"}}))
      return reportError(std::move(error));
    if (sys::fs::is_directory(output))
      return reportError(makeUsageError("-o " + output +
                                        ": is a directory; name the file to "
                                        "write"));
  }

  ImportOptions options;
  options.maxSeq = maxSeq;
  options.name = name;
  Expected<std::string> spec = importHuggingFace(folder, options);
  if (!spec)
    return reportError(spec.takeError());
  // The importer's output must check as any spec does; a failure here is
  // tmc's bug, shown with the text it wrote.
  std::string diagnostics;
  raw_string_ostream diagnosticsStream(diagnostics);
  LoadedSpec loaded = loadSpecFromString(*spec, "<imported spec>", diagnosticsStream);
  if (!loaded.ok()) {
    errs() << diagnostics;
    return reportError(makeError("the spec imported from " + folder +
                                 " does not check (the errors above); nothing was written"));
  }
  if (output.empty()) {
    outs() << *spec;
    return 0;
  }
  return reportError(writeFileAtomically(output, *spec));
}

} // namespace tmc::tools
