//===- ReferenceSpecTest.cpp - The oracle on specs that Sema produced -----===//
//
// Hand-built ModelSpecs test the arithmetic; these test the meeting point
// with the frontend: small versions of the contract's examples (and one spec
// per remaining feature) go through loadSpecFromString, and the reference must
// read exactly the manifest's tensors, evaluate them to finite numbers of the
// documented shape, and honour what Sema put in each layer's spec.
//
//===----------------------------------------------------------------------===//

#include "tests/reference/ReferenceTestUtil.h"

#include "frontend/Frontend.h"
#include "frontend/Manifest.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace tmc;
using namespace tmc::reftest;

namespace {

struct SpecCase {
  std::string name, source;
  ref::Inputs inputs;
};

void PrintTo(const SpecCase &c, std::ostream *os) { *os << c.name; }

ref::Inputs inputsOf(std::vector<int32_t> tokens, std::vector<int32_t> source = {},
                     std::vector<int32_t> segments = {}, std::optional<int64_t> length = {},
                     std::optional<int64_t> sourceLength = {}) {
  ref::Inputs inputs;
  inputs.tokens = std::move(tokens);
  inputs.sourceTokens = std::move(source);
  inputs.segments = std::move(segments);
  inputs.length = length;
  inputs.sourceLength = sourceLength;
  return inputs;
}

std::vector<SpecCase> specCases() {
  return {
      {"gpt2", R"(model gpt2 {
        vocab = 50; d_model = 16; max_seq = 12; position = learned
        output = lm_head(tied = true)
        decoder { layers = 2; heads = 2; d_ff = 32; ffn = gelu_tanh
                  norm = pre(layernorm(eps = 1e-5)); final_norm = layernorm(eps = 1e-5)
                  mask = causal } })",
       inputsOf({1, 2, 3, 49})},
      {"transformer", R"(model transformer {
        vocab = 40; d_model = 16; max_seq = 10; position = sinusoidal; embed_scale = true
        output = lm_head(tied = true)
        encoder { layers = 2; heads = 4; d_ff = 32; ffn = relu; mask = padding }
        decoder { layers = 2; heads = 4; d_ff = 32; ffn = relu; mask = causal } })",
       inputsOf({1, 2}, {3, 4, 5, 0}, {}, std::nullopt, 3)},
      {"bert_local", R"(model bert_local {
        vocab = 30; d_model = 16; max_seq = 16; position = learned; segments = 2
        embed_norm = layernorm(eps = 1e-12)
        output = classifier(classes = 2, pool = first)
        encoder { layers = 2; heads = 2; d_ff = 32; ffn = gelu
                  norm = post(layernorm(eps = 1e-12)); mask = padding
                  layers 0..0 { mask = padding + sliding_window(size = 4) + global(tokens = [0]) } } })",
       inputsOf({1, 2, 3, 4, 5, 6, 0, 0}, {}, {0, 0, 0, 1, 1, 1, 0, 0}, 6)},
      {"llama", R"(model llama {
        vocab = 32; d_model = 16; max_seq = 16; position = rope(theta = 10000)
        output = lm_head(tied = false)
        decoder { layers = 2; heads = 4; kv_heads = 2; d_ff = 24; ffn = swiglu; bias = false
                  norm = pre(rmsnorm(eps = 1e-6)); final_norm = rmsnorm(eps = 1e-6) } })",
       inputsOf({5, 6, 7})},
      {"unshared_alibi", R"(model unshared_alibi {
        vocab = 20; d_model = 8; max_seq = 8; position = alibi; share_embeddings = false
        output = lm_head(tied = true)
        encoder { layers = 1; heads = 2; d_ff = 16; ffn = geglu; final_norm = layernorm(eps = 1e-5) }
        decoder { layers = 1; heads = 2; d_ff = 16; ffn = silu } })",
       inputsOf({1, 2, 3}, {4, 5})},
      {"linformer_random", R"(model linformer_random {
        vocab = 20; d_model = 8; max_seq = 12
        output = classifier(classes = 3, pool = mean)
        encoder { layers = 2; heads = 2; d_ff = 16; mask = padding
                  layers 0..0 { attention = linformer(k = 3) }
                  layers 1..1 { mask = padding + dilated_window(size = 4, dilation = 2) +
                                       random(per_row = 2, seed = 9) } } })",
       inputsOf({1, 2, 3, 4, 5}, {}, {}, 4)},
  };
}

std::optional<ModelSpec> load(const SpecCase &c) {
  std::string diagnostics;
  llvm::raw_string_ostream stream(diagnostics);
  LoadedSpec loaded = loadSpecFromString(c.source, c.name + ".tm", stream);
  stream.flush();
  EXPECT_TRUE(loaded.spec.has_value()) << diagnostics;
  return loaded.spec;
}

class ReferenceSpecs : public ::testing::TestWithParam<SpecCase> {};

TEST_P(ReferenceSpecs, ReadsTheManifestAndEvaluates) {
  std::optional<ModelSpec> spec = load(GetParam());
  if (!spec)
    return;
  std::map<std::string, std::vector<int64_t>> ours, manifest;
  for (const TensorSpec &tensor : ref::requiredTensors(*spec))
    ours[tensor.name] = tensor.shape;
  for (const TensorSpec &tensor : buildManifest(*spec))
    manifest[tensor.name] = tensor.shape;
  EXPECT_EQ(ours, manifest);

  WeightStore weights(*spec);
  weights.randomize(17);
  auto out = run(*spec, weights, GetParam().inputs);
  for (double value : out)
    EXPECT_TRUE(std::isfinite(value));
}

INSTANTIATE_TEST_SUITE_P(Examples, ReferenceSpecs, ::testing::ValuesIn(specCases()),
                         [](const ::testing::TestParamInfo<SpecCase> &info) {
                           return info.param.name;
                         });

TEST(ReferenceSpecOverrides, LayerRangeMaskReachesTheEvaluator) {
  // bert_local's layer 0 has a local mask; evaluating with the stack's base
  // mask in its place must change the output, so the override is in use.
  SpecCase bert = specCases()[2];
  std::optional<ModelSpec> spec = load(bert);
  ASSERT_TRUE(spec);
  ASSERT_EQ(spec->encoder.layerSpecs.size(), 2u);
  ASSERT_EQ(spec->encoder.layer(0).mask.terms.size(), 3u);
  WeightStore weights(*spec);
  weights.randomize(2);
  spec->output = OutputKind::Hidden;
  auto local = run(*spec, weights, bert.inputs);
  ModelSpec global = *spec;
  global.encoder.layerSpecs[0].mask = global.encoder.mask;
  auto full = run(global, weights, bert.inputs);
  double diff = 0;
  for (size_t i = 0; i < local.size(); ++i)
    diff = std::max(diff, std::abs(local[i] - full[i]));
  EXPECT_GT(diff, 1e-6);
}

} // namespace
