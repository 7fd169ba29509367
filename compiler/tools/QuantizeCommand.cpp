//===- QuantizeCommand.cpp - `tmc quantize` -------------------------------===//
//
// Writes a model's weights file with its bf16, int8 and q4 linears' weights
// stored as their kernels multiply them (compiler/Quantize.h): the model's
// plan says which, so the command forms it (no kernel is compiled).
//
//===----------------------------------------------------------------------===//

#include "compiler/Error.h"
#include "compiler/Pipeline.h"
#include "compiler/Quantize.h"
#include "compiler/Toolchain.h"
#include "compiler/tools/Commands.h"
#include "runtime/memory.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace tmc::tools {

int quantizeCommand(int argc, char **argv) {
  releaseGlobalOptions({"o", "weights", "precision"});
  cl::opt<std::string> input(cl::Positional, cl::Required,
                             cl::desc("MODEL.tm, or MODEL.mlir saved by --emit=tm|tm-opt"),
                             cl::cat(toolOptions));
  cl::opt<std::string> weights("weights", cl::Required,
                               cl::desc("The weights to quantize, in the dtype of the spec's "
                                        "manifest (tmc manifest)"),
                               cl::value_desc("W.safetensors"), cl::cat(toolOptions));
  cl::opt<std::string> output("o", cl::Required,
                              cl::desc("Output safetensors file: the linears' weights as their "
                                       "kernels multiply them (tmc manifest --quantized lists "
                                       "it), the rest copied"),
                              cl::value_desc("WQ.safetensors"), cl::cat(toolOptions));
  PrecisionOption precision;
  if (!parseOptions(argc, argv,
                    "tmc quantize: store a model's bf16, int8 and q4 linear weights quantized, "
                    "as their kernels multiply them (a smaller file that loads without "
                    "quantizing)\n"))
    return kExitUsage;
  Expected<SpecOverrides> overrides = precision.overrides();
  if (!overrides)
    return reportError(overrides.takeError());
  if (overrides->kvCache)
    return reportError(makeUsageError(
        "--kv-cache does not change a model's weights, which are all tmc quantize writes"));
  if (overrides->precision && isIRInput(input))
    return reportError(makeUsageError("--precision applies to a .tm input; the linears of " +
                                      input.getValue() + " carry their precision already"));
  if (Error error = checkNotAnInput("-o", output, {{"the weights", weights}, {"the spec", input}}))
    return reportError(std::move(error));
  // Refused before the plan is formed: atomic writing would fail only at the end.
  if (sys::fs::is_directory(output))
    return reportError(makeUsageError("-o " + output + ": is a directory; name the file to write"));

  PipelineOptions pipeline;
  pipeline.input = input;
  pipeline.overrides = *overrides;
  Expected<std::unique_ptr<PlannedModel>> model = runPipeline(pipeline);
  if (!model)
    return reportError(model.takeError());
  const KernelPlan &plan = (*model)->plan;
  Expected<QuantizeSummary> summary = quantizeWeightsFile(plan, weights, output);
  if (!summary)
    return reportError(summary.takeError());

  for (const std::string &warning : summary->warnings)
    reportWarning(warning);
  if (summary->quantized() == 0) {
    bool reduced = false;
    for (const KernelDesc &kernel : plan.kernels)
      reduced |= kernel.kind == KernelKind::linear && kernel.precision != "f32";
    // A copy is still a valid weights file; the note says why it is no smaller.
    errs() << "tmc: note: nothing to quantize: "
           << (reduced ? "the reduced-precision linears' weights are also read unpacked or in "
                         "another precision"
                       : "every linear is f32")
           << "\n";
  }
  std::string counts;
  for (auto [name, count] : {std::pair{"int8", summary->int8}, std::pair{"q4", summary->q4},
                             std::pair{"bf16", summary->bf16}})
    if (count)
      counts += (counts.empty() ? " (" : ", ") + std::string(name) + " " + std::to_string(count);
  outs() << "wrote " << output << ": " << summary->tensors << " tensors, " << summary->quantized()
         << " quantized" << (counts.empty() ? "" : counts + ")") << ", "
         << tmr::formatBytes(summary->outputBytes)
         << " (the input: " << tmr::formatBytes(summary->inputBytes) << ")\n";
  return 0;
}

} // namespace tmc::tools
