//===- CheckCommands.cpp - `tmc check` and `tmc manifest` ----------------===//
//
// The commands that read a spec without compiling it: its size and shape
// (check), and the weight tensors it expects (manifest).
//
//===----------------------------------------------------------------------===//

#include "compiler/tools/Commands.h"
#include "frontend/Manifest.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

using namespace llvm;

namespace tmc::tools {

namespace {

int64_t elementCount(const tmc::TensorSpec &tensor) {
  int64_t count = 1;
  for (int64_t dim : tensor.shape)
    count *= dim;
  return count;
}

int64_t elementBytes(tmc::DType dtype) { return dtype == tmc::DType::F32 ? 4 : 2; }

} // namespace

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

} // namespace tmc::tools
