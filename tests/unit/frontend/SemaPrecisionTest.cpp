//===- SemaPrecisionTest.cpp - `precision` at its three levels ------------===//
//
// The model's value is the default of the stacks and their layers; a stack's
// key wins over it, a layer range's over the stack's; --precision
// (SpecOverrides) replaces the model's value only. The sizes `tmc check`
// reports split the weights by the precision they are computed in.
//
//===----------------------------------------------------------------------===//

#include "TestSpecs.h"

#include "frontend/ModelStats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace tmc;
using namespace tmc::test;
using ::testing::HasSubstr;

namespace {

/// `source` checked with `overrides`; fails the test on any error.
ModelSpec specOf(const std::string &source, SpecOverrides overrides = {}) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  LoadedSpec loaded = loadSpecFromString(source, "test.tm", os, overrides);
  EXPECT_TRUE(loaded.ok()) << diagnostics;
  return loaded.ok() ? *loaded.spec : ModelSpec();
}

std::vector<Precision> layerPrecisions(const StackSpec &stack) {
  std::vector<Precision> out;
  for (const LayerSpec &layer : stack.layerSpecs)
    out.push_back(layer.precision);
  return out;
}

constexpr Precision F32 = Precision::F32, BF16 = Precision::BF16, INT8 = Precision::Int8,
                    Q4 = Precision::Q4;

TEST(SemaPrecisionTest, DefaultIsF32) {
  ModelSpec spec = specOf(encoderSpec());
  EXPECT_EQ(spec.precision, F32);
  EXPECT_EQ(spec.encoder.precision, F32);
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(F32, F32));
  EXPECT_FALSE(spec.precisionLoc.isValid());
}

TEST(SemaPrecisionTest, StacksAndLayersInheritTheModels) {
  ModelSpec spec = specOf(encoderSpec("  precision = bf16\n"));
  EXPECT_EQ(spec.precision, BF16);
  EXPECT_TRUE(spec.precisionLoc.isValid());
  EXPECT_EQ(spec.encoder.precision, BF16);
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(BF16, BF16));
}

TEST(SemaPrecisionTest, Int8AtEveryLevel) {
  ModelSpec spec = specOf(encoderSpec("  precision = int8\n"));
  EXPECT_EQ(spec.precision, INT8);
  EXPECT_EQ(spec.encoder.precision, INT8);
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(INT8, INT8));
  // All three in one stack: the model's, the stack's, a layer range's.
  spec = specOf(encoderSpec("  precision = bf16\n",
                            "layers = 3\nheads = 4\nprecision = int8\n"
                            "layers 2..2 { precision = f32 }\n"));
  EXPECT_EQ(spec.precision, BF16);
  EXPECT_EQ(spec.encoder.precision, INT8);
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(INT8, INT8, F32));
  spec = specOf(encoderSpec("", "layers = 2\nheads = 4\nlayers 1..1 { precision = int8 }\n"));
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(F32, INT8));
  EXPECT_TRUE(spec.encoder.layer(1).precisionLoc.isValid());
}

TEST(SemaPrecisionTest, Q4AtEveryLevel) {
  ModelSpec spec = specOf(encoderSpec("  precision = q4\n"));
  EXPECT_EQ(spec.precision, Q4);
  EXPECT_EQ(spec.encoder.precision, Q4);
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(Q4, Q4));
  // All four in one stack: the model's, the stack's, two layer ranges'.
  spec = specOf(encoderSpec("  precision = bf16\n",
                            "layers = 4\nheads = 4\nprecision = q4\n"
                            "layers 2..2 { precision = f32 }\nlayers 3..3 { precision = int8 }\n"));
  EXPECT_EQ(spec.precision, BF16);
  EXPECT_EQ(spec.encoder.precision, Q4);
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(Q4, Q4, F32, INT8));
  spec = specOf(encoderSpec("", "layers = 2\nheads = 4\nlayers 0..0 { precision = q4 }\n"));
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(Q4, F32));
  EXPECT_TRUE(spec.encoder.layer(0).precisionLoc.isValid());
}

TEST(SemaPrecisionTest, StackThenLayerKeysWin) {
  ModelSpec spec = specOf(encoderSpec(
      "  precision = bf16\n",
      "layers = 4\nheads = 4\nprecision = f32\nlayers 1..2 { precision = bf16 }\n"));
  EXPECT_EQ(spec.precision, BF16);
  EXPECT_EQ(spec.encoder.precision, F32);
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(F32, BF16, BF16, F32));
  EXPECT_TRUE(spec.encoder.layer(1).precisionLoc.isValid());
}

TEST(SemaPrecisionTest, CommandLineReplacesOnlyTheModelsValue) {
  SpecOverrides bf16;
  bf16.precision = BF16;
  // No key anywhere: everything follows the override.
  ModelSpec spec = specOf(encoderSpec(), bf16);
  EXPECT_EQ(spec.precision, BF16);
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(BF16, BF16));
  // The model's own key loses to it; the stack's and a layer's win.
  spec = specOf(encoderSpec("  precision = f32\n",
                            "layers = 3\nheads = 4\nlayers 2..2 { precision = f32 }\n"),
                bf16);
  EXPECT_EQ(spec.precision, BF16);
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(BF16, BF16, F32));
  SpecOverrides f32;
  f32.precision = F32;
  spec = specOf(encoderSpec("  precision = bf16\n", "layers = 2\nheads = 4\nprecision = bf16\n"),
                f32);
  EXPECT_EQ(spec.precision, F32);
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(BF16, BF16));
  SpecOverrides int8;
  int8.precision = INT8;
  spec = specOf(encoderSpec("  precision = bf16\n",
                            "layers = 2\nheads = 4\nlayers 0..0 { precision = bf16 }\n"),
                int8);
  EXPECT_EQ(spec.precision, INT8);
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(BF16, INT8));
  SpecOverrides q4;
  q4.precision = Q4;
  spec = specOf(encoderSpec("  precision = int8\n",
                            "layers = 2\nheads = 4\nlayers 1..1 { precision = int8 }\n"),
                q4);
  EXPECT_EQ(spec.precision, Q4);
  EXPECT_EQ(spec.encoder.precision, Q4);
  EXPECT_THAT(layerPrecisions(spec.encoder), ::testing::ElementsAre(Q4, INT8));
}

TEST(SemaPrecisionTest, BadValuesAreLocatedErrors) {
  Loaded loaded = load(encoderSpec("  precision = f16\n"));
  EXPECT_FALSE(loaded.result.ok());
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("test.tm:5:15: error: unknown value 'f16' for 'precision'; expected "
                        "one of f32, bf16, int8, q4\n"));
  loaded = load(encoderSpec("", "layers = 2\nheads = 4\nlayers 0..0 { precision = true }\n"));
  EXPECT_FALSE(loaded.result.ok());
  EXPECT_THAT(loaded.diagnostics,
              HasSubstr("error: expected one of f32, bf16, int8, q4 for 'precision', found"));
  // Names are exact: no other width of integer, no upper case, not ggml's
  // type names.
  for (const char *value : {"int4", "INT8", "i8", "Q4", "q4_0", "q8"}) {
    loaded = load(encoderSpec(std::string("  precision = ") + value + "\n"));
    EXPECT_FALSE(loaded.result.ok()) << value;
    EXPECT_THAT(loaded.diagnostics, HasSubstr(std::string("unknown value '") + value +
                                              "' for 'precision'; expected one of f32, bf16, "
                                              "int8, q4\n"));
  }
  // A near miss of q4 is offered it.
  loaded = load(encoderSpec("  precision = q8\n"));
  EXPECT_THAT(loaded.diagnostics, HasSubstr("note: did you mean 'q4'?"));
}

TEST(SemaPrecisionTest, SizesSplitByPrecision) {
  // Per layer the linears hold q, k, v, o (64 x 64 each) and up, down
  // (64 x 256 each): 49152 elements.
  ModelSpec f32 = specOf(encoderSpec());
  std::optional<ModelSizes> sizes = computeSizes(f32);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes->bf16WeightBytes, 0);
  EXPECT_EQ(sizes->f32WeightBytes, sizes->parameters * 4);

  ModelSpec mixed = specOf(
      encoderSpec("", "layers = 2\nheads = 4\nlayers 1..1 { precision = bf16 }\n"));
  sizes = computeSizes(mixed);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes->bf16WeightBytes, 49152 * 2);
  EXPECT_EQ(sizes->f32WeightBytes, (sizes->parameters - 49152) * 4);
  // weight_bytes is the file's (dtype), whatever the precision.
  EXPECT_EQ(sizes->weightBytes, sizes->parameters * 4);
  EXPECT_EQ(sizes->int8WeightBytes, 0);
  EXPECT_EQ(sizes->q4WeightBytes, 0);
}

TEST(SemaPrecisionTest, Int8SizesCountAScaleAndACorrectionPerChannel) {
  // Per layer: 49152 elements in rows (output channels) q, k, v, o 64 each,
  // up 256, down 64: 576 channels, each with 4 bytes of f32 scale and 4 of
  // int32 correction.
  constexpr int64_t kLayerElements = 49152, kLayerChannels = 576;
  ModelSpec int8 = specOf(encoderSpec("  precision = int8\n"));
  std::optional<ModelSizes> sizes = computeSizes(int8);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes->int8WeightBytes, 2 * (kLayerElements + 8 * kLayerChannels));
  EXPECT_EQ(sizes->bf16WeightBytes, 0);
  EXPECT_EQ(sizes->f32WeightBytes, (sizes->parameters - 2 * kLayerElements) * 4);

  // All three in one model, one layer each.
  ModelSpec mixed = specOf(encoderSpec(
      "", "layers = 3\nheads = 4\nlayers 1..1 { precision = bf16 }\n"
          "layers 2..2 { precision = int8 }\n"));
  sizes = computeSizes(mixed);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes->bf16WeightBytes, kLayerElements * 2);
  EXPECT_EQ(sizes->int8WeightBytes, kLayerElements + 8 * kLayerChannels);
  EXPECT_EQ(sizes->f32WeightBytes, (sizes->parameters - 2 * kLayerElements) * 4);

  // A gated FFN adds the gate's matrix and channels; grouped queries narrow
  // k and v (kv_heads 2 of head_dim 16: 32 channels of 64 each).
  ModelSpec gated = specOf(encoderSpec(
      "  precision = int8\n",
      "layers = 1\nheads = 4\nkv_heads = 2\nd_ff = 256\nffn = swiglu\n"));
  sizes = computeSizes(gated);
  ASSERT_TRUE(sizes);
  int64_t elements = 64 * 64 * 2 + 32 * 64 * 2 + 256 * 64 * 3;
  int64_t channels = 64 + 32 + 32 + 64 + 256 * 2 + 64;
  EXPECT_EQ(sizes->int8WeightBytes, elements + 8 * channels);
}

TEST(SemaPrecisionTest, Q4SizesCount18BytesPerBlockOf32) {
  // Per layer 49152 elements, every K (64 or 256) a multiple of 32: 1536
  // blocks of 18 bytes, 4.5 bits a weight.
  constexpr int64_t kLayerElements = 49152, kLayerBlocks = 49152 / 32;
  ModelSpec q4 = specOf(encoderSpec("  precision = q4\n"));
  std::optional<ModelSizes> sizes = computeSizes(q4);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes->q4WeightBytes, 2 * 18 * kLayerBlocks);
  EXPECT_EQ(sizes->q4WeightBytes * 8, 2 * kLayerElements * 9 / 2);
  EXPECT_EQ(sizes->int8WeightBytes, 0);
  EXPECT_EQ(sizes->bf16WeightBytes, 0);
  EXPECT_EQ(sizes->f32WeightBytes, (sizes->parameters - 2 * kLayerElements) * 4);

  // All four in one model, one layer each.
  ModelSpec mixed =
      specOf(encoderSpec("", "layers = 4\nheads = 4\nlayers 1..1 { precision = bf16 }\n"
                             "layers 2..2 { precision = int8 }\nlayers 3..3 { precision = q4 }\n"));
  sizes = computeSizes(mixed);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes->bf16WeightBytes, kLayerElements * 2);
  EXPECT_EQ(sizes->int8WeightBytes, kLayerElements + 8 * 576);
  EXPECT_EQ(sizes->q4WeightBytes, 18 * kLayerBlocks);
  EXPECT_EQ(sizes->f32WeightBytes, (sizes->parameters - 3 * kLayerElements) * 4);

  // K that 32 does not divide: its last block is padded, ceil(K/32) blocks
  // per channel. q, k, v [40, 64] 2 blocks each, o [64, 40] 2, up [100, 64]
  // 2, down [64, 100] 4.
  ModelSpec odd = specOf(
      encoderSpec("  precision = q4\n", "layers = 1\nheads = 4\nhead_dim = 10\nd_ff = 100\n"));
  sizes = computeSizes(odd);
  ASSERT_TRUE(sizes);
  int64_t blocks = 3 * 40 * 2 + 64 * 2 + 100 * 2 + 64 * 4;
  int64_t elements = 3 * 40 * 64 + 64 * 40 + 100 * 64 + 64 * 100;
  EXPECT_EQ(sizes->q4WeightBytes, 18 * blocks);
  EXPECT_EQ(sizes->f32WeightBytes, (sizes->parameters - elements) * 4);
}

TEST(SemaPrecisionTest, TheHeadTakesTheModelsPrecision) {
  // An LM head's matrix (100 x 64) is bf16 with the model, whatever the
  // stack says; a tied one's too: the table is looked up in the head's
  // precision (tmk-tied-table-precision), so it counts there, not in f32.
  ModelSpec untied = specOf(encoderSpec("  precision = bf16\n  output = lm_head(tied = false)\n",
                                        "layers = 1\nheads = 4\nprecision = f32\n"));
  std::optional<ModelSizes> sizes = computeSizes(untied);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes->bf16WeightBytes, 100 * 64 * 2);
  ModelSpec tied = specOf(encoderSpec("  precision = bf16\n  output = lm_head(tied = true)\n",
                                      "layers = 1\nheads = 4\nprecision = f32\n"));
  std::optional<ModelSizes> untiedSizes = computeSizes(untied);
  sizes = computeSizes(tied);
  ASSERT_TRUE(sizes && untiedSizes);
  EXPECT_EQ(sizes->bf16WeightBytes, 100 * 64 * 2);
  // The tied model has no separate output matrix: its f32 bytes are the
  // untied one's less the table.
  EXPECT_EQ(sizes->f32WeightBytes, untiedSizes->f32WeightBytes - 100 * 64 * 4);
  // int8 likewise: the untied head's 100 channels of 64, a classifier's 3.
  untied = specOf(encoderSpec("  precision = int8\n  output = lm_head(tied = false)\n",
                              "layers = 1\nheads = 4\nprecision = f32\n"));
  sizes = computeSizes(untied);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes->int8WeightBytes, 100 * 64 + 100 * 8);
  ModelSpec classifier =
      specOf(encoderSpec("  precision = int8\n  output = classifier(classes = 3)\n",
                         "layers = 1\nheads = 4\nprecision = f32\n"));
  sizes = computeSizes(classifier);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes->int8WeightBytes, 3 * 64 + 3 * 8);
  tied = specOf(encoderSpec("  precision = int8\n  output = lm_head(tied = true)\n",
                            "layers = 1\nheads = 4\nprecision = f32\n"));
  sizes = computeSizes(tied);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes->int8WeightBytes, 100 * 64 + 100 * 8);
  // q4 likewise: 2 blocks of 18 bytes per channel of 64.
  untied = specOf(encoderSpec("  precision = q4\n  output = lm_head(tied = false)\n",
                              "layers = 1\nheads = 4\nprecision = f32\n"));
  sizes = computeSizes(untied);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes->q4WeightBytes, 100 * 2 * 18);
  classifier = specOf(encoderSpec("  precision = q4\n  output = classifier(classes = 3)\n",
                                  "layers = 1\nheads = 4\nprecision = f32\n"));
  sizes = computeSizes(classifier);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes->q4WeightBytes, 3 * 2 * 18);
  tied = specOf(encoderSpec("  precision = q4\n  output = lm_head(tied = true)\n",
                            "layers = 1\nheads = 4\nprecision = f32\n"));
  sizes = computeSizes(tied);
  ASSERT_TRUE(sizes);
  EXPECT_EQ(sizes->q4WeightBytes, 100 * 2 * 18);
}

} // namespace
