//===- PipelineTest.cpp - One path from a spec to its plan ----------------===//
//
// runPipeline (compiler/Pipeline.h) is the only way to a plan: these tests
// pin what it hands the back end (the stages it reports, the plan's weights
// and model description, and every kernel's schedule resolved once per
// concrete target), and that a saved IR stage gives the same plan as its
// spec.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipeline.h"
#include "compiler/Error.h"
#include "compiler/PreparedWeights.h"
#include "compiler/Schedule.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <unistd.h>

using namespace tmc;

namespace {

constexpr const char *kDecoder = R"(model tiny_decoder {
  vocab = 96
  d_model = 32
  max_seq = 24
  position = learned
  output = lm_head(tied = false)
  decoder {
    layers = 2
    heads = 4
    d_ff = 64
    ffn = gelu
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
    mask = causal
  }
}
)";

std::string writeTemp(const char *name, const std::string &text) {
  std::string path =
      std::string(::testing::TempDir()) + "/" + std::to_string(getpid()) + "-" + name;
  std::ofstream(path) << text;
  return path;
}

std::string planText(const KernelPlan &plan) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printKernelPlan(plan, os);
  return text;
}

/// Runs the pipeline, recording the stages it reports in `seen`.
llvm::Expected<std::unique_ptr<PlannedModel>> runRecording(const PipelineOptions &options,
                                                            std::vector<Stage> &seen) {
  return runPipeline(options, [&](Stage stage, PlannedModel &) -> llvm::Expected<bool> {
    seen.push_back(stage);
    return false;
  });
}

std::unique_ptr<PlannedModel> plan(const PipelineOptions &options) {
  llvm::Expected<std::unique_ptr<PlannedModel>> model = runPipeline(options);
  if (!model) {
    ADD_FAILURE() << llvm::toString(model.takeError());
    return nullptr;
  }
  return std::move(*model);
}

TEST(Pipeline, ReportsEveryStageInOrder) {
  PipelineOptions options;
  options.input = writeTemp("stages.tm", kDecoder);
  std::vector<Stage> seen;
  llvm::Expected<std::unique_ptr<PlannedModel>> model = runRecording(options, seen);
  ASSERT_TRUE(static_cast<bool>(model)) << llvm::toString(model.takeError());
  EXPECT_TRUE((*model)->complete);
  EXPECT_EQ(seen, (std::vector<Stage>{Stage::AST, Stage::TM, Stage::TMOpt, Stage::Kernels}));
}

TEST(Pipeline, AHookStopsIt) {
  PipelineOptions options;
  options.input = writeTemp("stop.tm", kDecoder);
  options.target = "x86-64-avx2";
  llvm::Expected<std::unique_ptr<PlannedModel>> model =
      runPipeline(options, [](Stage stage, PlannedModel &) -> llvm::Expected<bool> {
        return stage == Stage::TMOpt;
      });
  ASSERT_TRUE(static_cast<bool>(model)) << llvm::toString(model.takeError());
  EXPECT_FALSE((*model)->complete);
  EXPECT_TRUE((*model)->plan.kernels.empty());
  EXPECT_FALSE((*model)->target.has_value());
}

TEST(Pipeline, PlanCarriesTheModelAndItsWeights) {
  PipelineOptions options;
  options.input = writeTemp("model.tm", kDecoder);
  std::unique_ptr<PlannedModel> model = plan(options);
  ASSERT_TRUE(model);
  const KernelPlan &p = model->plan;
  EXPECT_EQ(p.model.name, "tiny_decoder");
  EXPECT_EQ(p.model.sourceName, options.input);
  EXPECT_EQ(p.model.output, OutputKind::LMHead);
  EXPECT_EQ(p.model.vocab, 96);
  EXPECT_EQ(p.model.maxSeq, 24);
  EXPECT_EQ(p.model.dModel, 32);
  EXPECT_EQ(p.model.layers, 2);
  EXPECT_EQ(p.model.segments, 0);
  ASSERT_FALSE(p.weights.empty());
  // Every weight slot of every call indexes the plan's own manifest.
  for (const KernelCall &call : p.calls)
    for (const CallArg &arg : call.args)
      if (arg.slot.kind == Slot::Kind::Weight) {
        EXPECT_GE(arg.slot.index, 0);
        EXPECT_LT(arg.slot.index, static_cast<int64_t>(p.weights.size()));
      }
  // No target: a plan for its sizes, with no schedules.
  EXPECT_TRUE(p.schedules.empty());
  EXPECT_FALSE(model->target.has_value());
}

TEST(Pipeline, SchedulesAreResolvedForEveryConcreteTarget) {
  PipelineOptions options;
  options.input = writeTemp("host.tm", kDecoder);
  options.target = "x86-64-avx512";
  std::unique_ptr<PlannedModel> single = plan(options);
  ASSERT_TRUE(single);
  ASSERT_EQ(single->plan.schedules.size(), 1u);
  for (size_t k = 0; k < single->plan.kernels.size(); ++k)
    EXPECT_EQ(single->plan.schedule(k, *single->target).str(),
              defaultSchedule(single->plan.kernels[k], *single->target).str());

  // A multi-ISA target: one row of schedules per variant, each the
  // variant's own default (AVX-512 and AVX2 tiles differ).
  llvm::Expected<TargetInfo> host = resolveTarget("host");
  ASSERT_TRUE(static_cast<bool>(host)) << llvm::toString(host.takeError());
  std::vector<TargetInfo> variants = host->concreteTargets();
  if (variants.size() < 2)
    GTEST_SKIP() << "the host target has one variant on this machine";
  options.target = "host";
  std::unique_ptr<PlannedModel> multi = plan(options);
  ASSERT_TRUE(multi);
  ASSERT_EQ(multi->plan.schedules.size(), variants.size());
  for (const TargetInfo &variant : variants)
    for (size_t k = 0; k < multi->plan.kernels.size(); ++k)
      EXPECT_EQ(multi->plan.schedule(k, variant).str(),
                defaultSchedule(multi->plan.kernels[k], variant).str());
}

TEST(Pipeline, ATunedScheduleReplacesTheDefaultOnItsTargetOnly) {
  PipelineOptions options;
  options.input = writeTemp("tuned.tm", kDecoder);
  std::unique_ptr<PlannedModel> model = plan(options);
  ASSERT_TRUE(model);
  KernelPlan &p = model->plan;
  TargetInfo avx2 = llvm::cantFail(resolveTarget("x86-64-avx2"));
  TargetInfo avx512 = llvm::cantFail(resolveTarget("x86-64-avx512"));
  TargetInfo both = avx512;
  both.variants = {avx512, avx2};
  ASSERT_FALSE(p.kernels.empty());
  Schedule tuned = defaultSchedule(p.kernels[0], avx2);
  tuned.tileRows = 3;
  ScheduleTable table{{scheduleKey(p.kernels[0], avx2), tuned}};
  resolveSchedules(p, both, table);
  EXPECT_EQ(p.schedule(0, avx2).str(), tuned.str());
  EXPECT_EQ(p.schedule(0, avx512).str(), defaultSchedule(p.kernels[0], avx512).str());
}

TEST(Pipeline, ASavedStageGivesTheSamePlanAsItsSpec) {
  PipelineOptions options;
  options.input = writeTemp("saved.tm", kDecoder);
  std::string saved;
  llvm::Expected<std::unique_ptr<PlannedModel>> stopped =
      runPipeline(options, [&](Stage stage, PlannedModel &model) -> llvm::Expected<bool> {
        if (stage != Stage::TMOpt)
          return false;
        saved = moduleText(*model.module, /*withLocations=*/true);
        return true;
      });
  ASSERT_TRUE(static_cast<bool>(stopped)) << llvm::toString(stopped.takeError());
  std::unique_ptr<PlannedModel> fromSpec = plan(options);
  ASSERT_TRUE(fromSpec);

  PipelineOptions resumed;
  resumed.input = writeTemp("saved.mlir", saved);
  std::vector<Stage> seen;
  llvm::Expected<std::unique_ptr<PlannedModel>> fromIR = runRecording(resumed, seen);
  ASSERT_TRUE(static_cast<bool>(fromIR)) << llvm::toString(fromIR.takeError());
  EXPECT_EQ(seen, (std::vector<Stage>{Stage::TM, Stage::TMOpt, Stage::Kernels}));
  EXPECT_EQ(planText((*fromIR)->plan), planText(fromSpec->plan));
  ASSERT_EQ((*fromIR)->plan.weights.size(), fromSpec->plan.weights.size());
  for (size_t i = 0; i < fromSpec->plan.weights.size(); ++i)
    EXPECT_EQ((*fromIR)->plan.weights[i].name, fromSpec->plan.weights[i].name);
  EXPECT_EQ((*fromIR)->plan.model.name, fromSpec->plan.model.name);
}

/// A decoder of max_seq `maxSeq` whose layers see `mask`.
std::string decoderSpec(int64_t maxSeq, const std::string &mask) {
  return "model long_decoder {\n  vocab = 96\n  d_model = 32\n  max_seq = " +
         std::to_string(maxSeq) +
         "\n  position = rope\n  output = lm_head(tied = false)\n  decoder {\n    layers = 2\n"
         "    heads = 4\n    d_ff = 64\n    ffn = gelu\n    norm = pre(rmsnorm(eps = 1e-5))\n"
         "    final_norm = rmsnorm(eps = 1e-5)\n    mask = " +
         mask + "\n  }\n}\n";
}

TEST(Pipeline, CachesOfWindowedAttentionDoNotGrowWithMaxSeq) {
  // Key/value caches of a 64-key sliding window hold its 63 earlier rows and
  // a run of 256, whatever max_seq; a causal decoder's hold max_seq rows.
  std::map<int64_t, int64_t> windowed, causal;
  for (int64_t maxSeq : {1024, 16384}) {
    PipelineOptions options;
    options.input =
        writeTemp("window.tm", decoderSpec(maxSeq, "causal + sliding_window(size = 64)"));
    std::unique_ptr<PlannedModel> model = plan(options);
    ASSERT_TRUE(model);
    EXPECT_EQ(model->plan.runChunk, 256);
    ASSERT_EQ(model->plan.caches.size(), 4u); // k and v of 2 layers
    for (const CacheDesc &cache : model->plan.caches) {
      EXPECT_EQ(cache.keep, 63) << cache.name;
      EXPECT_EQ(cache.capacity, 63 + 256) << cache.name;
    }
    windowed[maxSeq] = model->plan.cacheBytes;

    options.input = writeTemp("causal.tm", decoderSpec(maxSeq, "causal"));
    model = plan(options);
    ASSERT_TRUE(model);
    EXPECT_EQ(model->plan.runChunk, 0);
    for (const CacheDesc &cache : model->plan.caches)
      EXPECT_FALSE(cache.ring()) << cache.name;
    causal[maxSeq] = model->plan.cacheBytes;
  }
  EXPECT_EQ(windowed[1024], windowed[16384]);
  EXPECT_EQ(windowed[1024], 4 * (TMR_RING_HEADER_BYTES + 319 * 32 * 4));
  EXPECT_EQ(causal[16384], 16 * causal[1024]);
}

TEST(Pipeline, SpecErrorsAreDiagnosedOnce) {
  PipelineOptions options;
  options.input = writeTemp("bad.tm", "model broken { vocab = 0 }\n");
  testing::internal::CaptureStderr();
  llvm::Expected<std::unique_ptr<PlannedModel>> model = runPipeline(options);
  ASSERT_FALSE(static_cast<bool>(model));
  EXPECT_EQ(reportError(model.takeError()), 1);
  std::string printed = testing::internal::GetCapturedStderr();
  // The frontend's diagnostic (file:line:col) and no second "tmc: error".
  EXPECT_NE(printed.find("bad.tm:1:"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("tmc: error"), std::string::npos) << printed;
}

} // namespace

namespace {

/// The format `tmc quantize` writes and the loader accepts for each tensor
/// (PreparedWeights.h's quantizedStorage): the precision of the one kernel
/// that packs it, nothing for a tensor any kernel reads unpacked.
std::map<std::string, std::string> storageOf(const char *spec) {
  PipelineOptions options;
  options.input = writeTemp("storage.tm", spec);
  std::unique_ptr<PlannedModel> model = plan(options);
  std::map<std::string, std::string> storage;
  if (!model)
    return storage;
  std::vector<std::string> entries = quantizedStorage(model->plan);
  EXPECT_EQ(entries.size(), model->plan.weights.size());
  for (size_t i = 0; i < entries.size() && i < model->plan.weights.size(); ++i)
    storage[model->plan.weights[i].name] = entries[i];
  return storage;
}

TEST(QuantizedStorage, IsThePrecisionOfTheKernelThatPacksEachWeight) {
  std::map<std::string, std::string> storage = storageOf(R"(model mixed {
  vocab = 40
  d_model = 32
  max_seq = 8
  position = learned
  precision = int8
  output = lm_head(tied = false)
  decoder {
    layers = 3
    heads = 4
    d_ff = 48
    layers 1..1 { precision = q4 }
    layers 2..2 { precision = f32 }
  }
}
)");
  // q, k and v are stacked into one GEMM: each part takes its precision.
  EXPECT_EQ(storage["decoder.layers.0.self_attn.q.weight"], "int8");
  EXPECT_EQ(storage["decoder.layers.0.self_attn.v.weight"], "int8");
  EXPECT_EQ(storage["decoder.layers.0.ffn.down.weight"], "int8");
  EXPECT_EQ(storage["decoder.layers.1.self_attn.k.weight"], "q4");
  EXPECT_EQ(storage["decoder.layers.1.ffn.up.weight"], "q4");
  EXPECT_EQ(storage["decoder.layers.2.self_attn.q.weight"], "");
  EXPECT_EQ(storage["decoder.layers.0.self_attn.q.bias"], "");
  EXPECT_EQ(storage["embed.tokens"], "");
  EXPECT_EQ(storage["output.weight"], "int8");
}

TEST(QuantizedStorage, StoresATiedHeadsTableAsTheHeadPacksIt) {
  // The lookup reads the head's packed copy (tmk-tied-table-precision).
  std::map<std::string, std::string> storage = storageOf(R"(model tied {
  vocab = 40
  d_model = 32
  max_seq = 8
  position = learned
  precision = q4
  output = lm_head(tied = true)
  decoder { layers = 1; heads = 4; d_ff = 48 }
}
)");
  EXPECT_EQ(storage["embed.tokens"], "q4");
  EXPECT_EQ(storage["embed.positions"], "");
  EXPECT_EQ(storage["decoder.layers.0.ffn.up.weight"], "q4");
}

TEST(QuantizedStorage, KeepsAnEncoderDecodersUnsharedTableF32) {
  // The decoder's own table is the head's; the encoder's is only looked up.
  std::map<std::string, std::string> storage = storageOf(R"(model seq2seq {
  vocab = 40
  d_model = 32
  max_seq = 8
  position = learned
  precision = int8
  share_embeddings = false
  output = lm_head(tied = true)
  encoder { layers = 1; heads = 4; d_ff = 48 }
  decoder { layers = 1; heads = 4; d_ff = 48 }
}
)");
  EXPECT_EQ(storage["decoder.embed.tokens"], "int8");
  EXPECT_EQ(storage["embed.tokens"], "");
}

} // namespace
