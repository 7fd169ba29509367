//===- ReferenceTestUtil.cpp - Hand-built models for the oracle's tests ---===//

#include "tests/reference/ReferenceTestUtil.h"

#include <cmath>

namespace tmc::reftest {

ModelSpec resolveLayers(ModelSpec spec) {
  for (StackSpec *stack : {&spec.encoder, &spec.decoder})
    if (stack->present && stack->layerSpecs.empty() && stack->layers > 0)
      stack->layerSpecs.assign(static_cast<size_t>(stack->layers),
                               static_cast<const LayerSpec &>(*stack));
  return spec;
}

WeightStore::WeightStore(const ModelSpec &spec) {
  for (const TensorSpec &tensor : ref::requiredTensors(resolveLayers(spec))) {
    int64_t count = 1;
    for (int64_t dim : tensor.shape)
      count *= dim;
    tensors[tensor.name].assign(static_cast<size_t>(count), 0.0f);
  }
}

void WeightStore::set(const std::string &name, std::vector<float> values) {
  auto it = tensors.find(name);
  ASSERT_NE(it, tensors.end()) << "no tensor " << name << " in the reference's list";
  ASSERT_EQ(it->second.size(), values.size()) << "size of " << name;
  it->second = std::move(values);
}

void WeightStore::randomize(uint64_t seed, float scale) {
  uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (auto &[name, values] : tensors)
    for (float &value : values) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      double unit = static_cast<double>(state >> 11) / 9007199254740992.0; // [0, 1)
      value = static_cast<float>((2.0 * unit - 1.0) * scale);
    }
}

void WeightStore::setExtra(const std::string &name, std::vector<float> values) {
  tensors[name] = std::move(values);
}

const std::vector<float> &WeightStore::get(const std::string &name) const {
  static const std::vector<float> empty;
  auto it = tensors.find(name);
  EXPECT_NE(it, tensors.end()) << "no tensor " << name;
  return it == tensors.end() ? empty : it->second;
}

ref::WeightLookup WeightStore::lookup() const {
  return [this](const std::string &name) -> const float * {
    auto it = tensors.find(name);
    return it == tensors.end() ? nullptr : it->second.data();
  };
}

std::vector<float> identity(int64_t count) {
  std::vector<float> out(static_cast<size_t>(count * count), 0.0f);
  for (int64_t i = 0; i < count; ++i)
    out[static_cast<size_t>(i * count + i)] = 1.0f;
  return out;
}

ref::Inputs tokensOnly(std::vector<int32_t> tokens) {
  ref::Inputs inputs;
  inputs.tokens = std::move(tokens);
  return inputs;
}

std::vector<double> run(const ModelSpec &spec, const WeightStore &weights,
                        const ref::Inputs &inputs) {
  std::string error;
  ModelSpec resolved = resolveLayers(spec);
  auto out = ref::evaluate(resolved, weights.lookup(), inputs, &error);
  EXPECT_TRUE(out.has_value()) << error;
  if (!out)
    return {};
  int64_t rows = ref::outputRows(resolved, static_cast<int64_t>(inputs.tokens.size()));
  EXPECT_EQ(static_cast<int64_t>(out->size()), rows * resolved.outputWidth());
  return *out;
}

std::vector<double> run(const ModelSpec &spec, const WeightStore &weights,
                        const std::vector<int32_t> &tokens) {
  return run(spec, weights, tokensOnly(tokens));
}

std::string evaluateError(const ModelSpec &spec, const WeightStore &weights,
                          const ref::Inputs &inputs) {
  std::string error;
  auto out = ref::evaluate(resolveLayers(spec), weights.lookup(), inputs, &error);
  EXPECT_FALSE(out.has_value());
  return error;
}

void expectNear(const std::vector<double> &actual, const std::vector<double> &expected,
                double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
}

ModelSpec tinySpec(int64_t dModel, int64_t heads, int64_t headDim) {
  ModelSpec spec;
  spec.name = "tiny";
  spec.vocab = 4;
  spec.dModel = dModel;
  spec.maxSeq = 8;
  spec.position = PositionKind::None;
  spec.encoder.present = true;
  spec.encoder.layers = 1;
  spec.encoder.heads = heads;
  spec.encoder.kvHeads = heads;
  spec.encoder.headDim = headDim;
  spec.encoder.dFF = 2;
  return spec;
}

ModelSpec passThroughSpec(int64_t dModel) {
  ModelSpec spec = tinySpec(dModel, 1, dModel);
  spec.encoder.placement = NormPlacement::Pre;
  return spec;
}

ModelSpec probeSpec(bool decoder, int64_t width, int64_t heads) {
  ModelSpec spec;
  spec.name = "probe";
  spec.vocab = width;
  spec.dModel = width;
  spec.maxSeq = width;
  spec.position = PositionKind::None;
  StackSpec &stack = decoder ? spec.decoder : spec.encoder;
  stack.present = true;
  stack.layers = 1;
  stack.heads = heads;
  stack.kvHeads = heads;
  stack.headDim = width / heads;
  stack.dFF = 1;
  stack.bias = false;
  stack.placement = NormPlacement::Pre;
  stack.norm = NormSpec{NormKind::RMSNorm, 0.0, {}};
  return spec;
}

WeightStore probeWeights(const ModelSpec &spec) {
  WeightStore weights(spec);
  int64_t d = spec.dModel;
  std::string layer = spec.encoder.present ? "encoder.layers.0" : "decoder.layers.0";
  weights.set("embed.tokens", identity(d));
  // rmsnorm(e_t) = sqrt(d) e_t; this weight makes it 2 e_t.
  float gain = static_cast<float>(2.0 / std::sqrt(static_cast<double>(d)));
  weights.set(layer + ".norm1.weight", std::vector<float>(static_cast<size_t>(d), gain));
  weights.set(layer + ".self_attn.v.weight", identity(d));
  weights.set(layer + ".self_attn.o.weight", identity(d));
  return weights;
}

std::vector<int32_t> iota(int64_t count) {
  std::vector<int32_t> out;
  for (int64_t i = 0; i < count; ++i)
    out.push_back(static_cast<int32_t>(i));
  return out;
}

std::vector<double> probeExpected(const std::vector<std::string> &pattern, int64_t width) {
  std::vector<double> out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    double seen = 0;
    for (char c : pattern[i])
      seen += c == '1';
    for (int64_t j = 0; j < width; ++j) {
      bool allowed = j < static_cast<int64_t>(pattern[i].size()) && pattern[i][j] == '1';
      out.push_back((static_cast<int64_t>(i) == j ? 1.0 : 0.0) +
                    (allowed ? 2.0 / seen : 0.0));
    }
  }
  return out;
}

} // namespace tmc::reftest
