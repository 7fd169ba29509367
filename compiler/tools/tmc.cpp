//===- tmc.cpp - The tmc command-line tool --------------------------------===//
//
// `tmc COMMAND ...`: each command declares its own options (local cl::opts,
// registered only while it runs) so that `tmc compile --help` lists exactly
// what compile takes.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver.h"
#include "compiler/InitWeights.h"
#include "compiler/Target.h"
#include "frontend/Frontend.h"
#include "frontend/Manifest.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace llvm;

namespace {

cl::OptionCategory toolOptions("tmc options");

struct Command {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
};

/// libLLVM.so registers options of its own in the same registry (--threads
/// among them); a command takes over the names it defines, so call this before
/// declaring its cl::opts.
void releaseGlobalOptions(std::initializer_list<StringRef> names) {
  auto &registered = cl::getRegisteredOptions();
  for (StringRef name : names)
    if (auto it = registered.find(name); it != registered.end())
      it->second->removeArgument();
}

/// Parses this command's options; exits with status 1 on a malformed line.
void parseOptions(int argc, char **argv, const char *overview) {
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(argc, argv, overview);
}

int64_t elementCount(const tmc::TensorSpec &tensor) {
  int64_t count = 1;
  for (int64_t dim : tensor.shape)
    count *= dim;
  return count;
}

int64_t elementBytes(tmc::DType dtype) { return dtype == tmc::DType::F32 ? 4 : 2; }

/// Loads a spec for a command; prints diagnostics and returns nullopt on error.
std::optional<tmc::LoadedSpec> load(const std::string &path) {
  tmc::LoadedSpec loaded = tmc::loadSpec(path, errs());
  if (!loaded.ok())
    return std::nullopt;
  return loaded;
}

int checkCommand(int argc, char **argv) {
  releaseGlobalOptions({"json"});
  cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("MODEL.tm"),
                             cl::cat(toolOptions));
  cl::opt<bool> json("json", cl::desc("Print the summary as JSON"), cl::cat(toolOptions));
  parseOptions(argc, argv, "tmc check: parse and verify a model spec, and summarize it\n");
  auto loaded = load(input);
  if (!loaded)
    return 1;
  const tmc::ModelSpec &spec = *loaded->spec;
  int64_t parameters = 0, bytes = 0;
  for (const tmc::TensorSpec &tensor : tmc::buildManifest(spec)) {
    parameters += elementCount(tensor);
    bytes += elementCount(tensor) * elementBytes(tensor.dtype);
  }
  auto stackJson = [&](const tmc::StackSpec &stack) {
    return nlohmann::json{{"layers", stack.layers},     {"heads", stack.heads},
                          {"kv_heads", stack.kvHeads},  {"head_dim", stack.headDim},
                          {"d_ff", stack.dFF},          {"ffn", tmc::toString(stack.ffn)},
                          {"norm", std::string(tmc::toString(stack.placement)) + "(" +
                                       tmc::toString(stack.norm.kind) + ")"},
                          {"bias", stack.bias}};
  };
  nlohmann::json summary = {{"model", spec.name},         {"vocab", spec.vocab},
                            {"d_model", spec.dModel},     {"max_seq", spec.maxSeq},
                            {"position", tmc::toString(spec.position)},
                            {"parameters", parameters},   {"weight_bytes", bytes}};
  if (spec.encoder.present)
    summary["encoder"] = stackJson(spec.encoder);
  if (spec.decoder.present)
    summary["decoder"] = stackJson(spec.decoder);
  if (json) {
    outs() << summary.dump(2) << "\n";
    return 0;
  }
  outs() << input << ": model '" << spec.name << "' is valid\n";
  outs() << "  parameters    " << parameters << "\n";
  outs() << "  weight bytes  " << bytes << "\n";
  outs() << "  d_model " << spec.dModel << ", vocab " << spec.vocab << ", max_seq "
         << spec.maxSeq << ", position " << tmc::toString(spec.position) << "\n";
  for (const char *name : {"encoder", "decoder"}) {
    if (!summary.contains(name))
      continue;
    const nlohmann::json &s = summary[name];
    outs() << "  " << name << ": " << s["layers"].get<int64_t>() << " layers, "
           << s["heads"].get<int64_t>() << " heads (kv " << s["kv_heads"].get<int64_t>()
           << ", head_dim " << s["head_dim"].get<int64_t>() << "), d_ff "
           << s["d_ff"].get<int64_t>() << ", ffn " << s["ffn"].get<std::string>() << ", "
           << s["norm"].get<std::string>() << "\n";
  }
  return 0;
}

int manifestCommand(int argc, char **argv) {
  releaseGlobalOptions({"json"});
  cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("MODEL.tm"),
                             cl::cat(toolOptions));
  cl::opt<bool> json("json", cl::desc("Print the tensors as JSON"), cl::cat(toolOptions));
  parseOptions(argc, argv, "tmc manifest: list the weight tensors a model expects\n");
  auto loaded = load(input);
  if (!loaded)
    return 1;
  std::vector<tmc::TensorSpec> manifest = tmc::buildManifest(*loaded->spec);
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const tmc::TensorSpec &tensor : manifest)
      list.push_back({{"name", tensor.name},
                      {"shape", tensor.shape},
                      {"dtype", tmc::safetensorsDType(tensor.dtype)}});
    outs() << list.dump(2) << "\n";
    return 0;
  }
  for (const tmc::TensorSpec &tensor : manifest) {
    outs() << tensor.name << " [";
    interleaveComma(tensor.shape, outs());
    outs() << "] " << tmc::safetensorsDType(tensor.dtype) << "\n";
  }
  return 0;
}

int initWeightsCommand(int argc, char **argv) {
  releaseGlobalOptions({"o", "seed"});
  cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("MODEL.tm"),
                             cl::cat(toolOptions));
  cl::opt<std::string> output("o", cl::Required, cl::desc("Output safetensors file"),
                              cl::value_desc("W.safetensors"), cl::cat(toolOptions));
  cl::opt<uint64_t> seed("seed", cl::desc("Random seed (default 0)"), cl::init(0),
                         cl::cat(toolOptions));
  parseOptions(argc, argv,
               "tmc init-weights: write deterministic random weights for a model\n");
  auto loaded = load(input);
  if (!loaded)
    return 1;
  std::string error;
  if (!tmc::writeInitialWeights(*loaded->spec, output, seed, &error)) {
    errs() << "tmc: error: " << error << "\n";
    return 1;
  }
  return 0;
}

int compileCommand(int argc, char **argv) {
  releaseGlobalOptions({"o", "emit", "target", "dump-stages-to", "print-ir-after-all",
                        "threads", "O"});
  cl::opt<std::string> input(cl::Positional, cl::Required, cl::desc("MODEL.tm"),
                             cl::cat(toolOptions));
  cl::opt<std::string> output("o", cl::desc("Output executable (or stage text; default stdout)"),
                              cl::value_desc("OUT"), cl::cat(toolOptions));
  cl::opt<std::string> emit("emit", cl::desc("Stop after a stage and write it: ast, tm, "
                                             "tm-opt, kernels, halide, stmt, asm, obj, exe"),
                            cl::value_desc("STAGE"), cl::init("exe"), cl::cat(toolOptions));
  cl::opt<std::string> target("target",
                              cl::desc(std::string("Code generation target: ") +
                                       tmc::targetNames()),
                              cl::value_desc("T"), cl::init("host"), cl::cat(toolOptions));
  cl::opt<std::string> dumpDir("dump-stages-to", cl::desc("Write every stage's text into DIR"),
                               cl::value_desc("DIR"), cl::cat(toolOptions));
  cl::opt<bool> printAfterAll("print-ir-after-all",
                              cl::desc("Print the tm IR after every pass (to stderr)"),
                              cl::cat(toolOptions));
  cl::opt<int> threads("threads", cl::desc("Default thread count of the executable (0: all cores)"),
                       cl::init(0), cl::cat(toolOptions));
  cl::opt<char> optLevel("O", cl::desc("Optimization level 0-3 (-O0: no fusion; default 2)"),
                         cl::Prefix, cl::init('2'), cl::cat(toolOptions));
  parseOptions(argc, argv, "tmc compile: compile a model spec into a standalone executable\n");

  tmc::CompileOptions options;
  options.input = input;
  options.output = output;
  options.target = target;
  options.dumpStagesTo = dumpDir;
  options.printIRAfterAll = printAfterAll;
  std::optional<tmc::Stage> stage = tmc::parseStage(emit);
  if (!stage) {
    errs() << "tmc: error: --emit: unknown stage '" << emit << "' (expected one of: "
           << tmc::stageNames() << ")\n";
    return 1;
  }
  options.emit = *stage;
  if (optLevel < '0' || optLevel > '3') {
    errs() << "tmc: error: -O" << optLevel << ": the optimization level must be 0 to 3\n";
    return 1;
  }
  options.optLevel = static_cast<unsigned>(optLevel - '0');
  if (threads < 0 || threads > 1024) {
    errs() << "tmc: error: --threads: " << threads << " is out of range [0, 1024]\n";
    return 1;
  }
  options.threads = threads;
  return tmc::runCompile(options);
}

const Command kCommands[] = {
    {"check", "parse and verify a spec; print its size", checkCommand},
    {"manifest", "list the weight tensors a spec expects", manifestCommand},
    {"init-weights", "write deterministic random weights (safetensors)", initWeightsCommand},
    {"compile", "compile a spec into a standalone executable", compileCommand},
};

void printUsage(raw_ostream &os) {
  os << "usage: tmc COMMAND [options]   (tmc COMMAND --help for its options)\n\n"
        "tmc compiles a transformer described in a .tm spec into a standalone executable.\n\n"
        "commands:\n";
  for (const Command &command : kCommands)
    os << "  " << left_justify(command.name, 14) << command.summary << "\n";
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  if (argc < 2) {
    printUsage(errs());
    return 1;
  }
  StringRef name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    printUsage(outs());
    return 0;
  }
  for (const Command &command : kCommands) {
    if (name != command.name)
      continue;
    std::string program = std::string("tmc ") + command.name;
    std::vector<char *> args = {program.data()};
    args.insert(args.end(), argv + 2, argv + argc);
    return command.run(static_cast<int>(args.size()), args.data());
  }
  errs() << "tmc: error: unknown command '" << name << "'\n";
  for (const Command &command : kCommands)
    if (StringRef(command.name).edit_distance(name) <= 2)
      errs() << "tmc: note: did you mean '" << command.name << "'?\n";
  printUsage(errs());
  return 1;
}
