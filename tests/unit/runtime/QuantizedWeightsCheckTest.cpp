//===- QuantizedWeightsCheckTest.cpp - checkTensors on pre-quantized files ===//
//
// A weight the model multiplies in int8, q4 or bf16 may come pre-quantized
// (`tmc quantize`; docs/spec-language.md, "Quantized weight files"): the
// loader accepts exactly that format for exactly that precision, and names
// the tensor, what the file holds and what would do otherwise.
//
//===----------------------------------------------------------------------===//
#include "runtime/safetensors.h"
#include "tests/unit/runtime/TempDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace tmr;
using namespace tmr::test;
using testing::HasSubstr;

namespace {

// One linear weight [N = 3, K = 40] (two q4 blocks, the second padded) and
// a bias, as a model that multiplies the weight in `quantized` expects them.
constexpr int64_t kN = 3, kK = 40, kBlocks = 2;

std::vector<tmr_tensor_desc> manifest(tmr_quantized quantized) {
  return {{"w", 2, {kN, kK}, TMR_F32, quantized}, {"b", 1, {kN}, TMR_F32, TMR_QUANT_NONE}};
}

/// checkTensors' message for a file of `tensors` ("" when it is accepted).
std::string check(const std::vector<TensorToWrite> &tensors, tmr_quantized quantized) {
  TempDir dir;
  std::string path = dir.file("q.safetensors"), error;
  if (!writeSafetensors(path, tensors, &error))
    return "write failed: " + error;
  auto file = SafetensorsFile::open(path, &error);
  if (!file)
    return "open failed: " + error;
  std::vector<tmr_tensor_desc> expected = manifest(quantized);
  if (checkTensors(*file, "q.safetensors", expected.data(), 2, &error))
    return "";
  return error;
}

struct Data {
  std::vector<int8_t> int8Values = std::vector<int8_t>(kN * kK, 1);
  std::vector<uint8_t> q4Values = std::vector<uint8_t>(kN * 64, 0x88);
  std::vector<float> f32 = std::vector<float>(kN * kK, 0.5f);
  std::vector<uint16_t> f16 = std::vector<uint16_t>(kN * kBlocks, 0x3c00);
  std::vector<uint16_t> bf16 = std::vector<uint16_t>(kN * kK, 0x3f80);
};

TEST(QuantizedWeightsCheck, AcceptsEachFormatForItsPrecision) {
  Data d;
  EXPECT_EQ(check({{"w", TMR_I8, {kN, kK}, d.int8Values.data()},
                   {"w.scale", TMR_F32, {kN}, d.f32.data()},
                   {"b", TMR_F32, {kN}, d.f32.data()}},
                  TMR_QUANT_INT8),
            "");
  EXPECT_EQ(check({{"w", TMR_U8, {kN, 16 * kBlocks}, d.q4Values.data()},
                   {"w.scale", TMR_F16, {kN, kBlocks}, d.f16.data()},
                   {"b", TMR_F32, {kN}, d.f32.data()}},
                  TMR_QUANT_Q4),
            "");
  EXPECT_EQ(check({{"w", TMR_BF16, {kN, kK}, d.bf16.data()}, {"b", TMR_F32, {kN}, d.f32.data()}},
                  TMR_QUANT_BF16),
            "");
  // The f32 original is always accepted.
  EXPECT_EQ(check({{"w", TMR_F32, {kN, kK}, d.f32.data()}, {"b", TMR_F32, {kN}, d.f32.data()}},
                  TMR_QUANT_Q4),
            "");
}

TEST(QuantizedWeightsCheck, RefusesAFileQuantizedForAnotherPrecision) {
  Data d;
  std::string error = check({{"w", TMR_I8, {kN, kK}, d.int8Values.data()},
                             {"w.scale", TMR_F32, {kN}, d.f32.data()},
                             {"b", TMR_F32, {kN}, d.f32.data()}},
                            TMR_QUANT_Q4);
  EXPECT_THAT(error, HasSubstr("q.safetensors: tensor 'w' has dtype I8 (quantized for int8), but "
                               "the model multiplies it in q4: expected F32 values or q4 (tmc "
                               "quantize --precision q4)"));
  // An f32 model: pre-quantized values are refused, the scale not taken.
  error = check({{"w", TMR_U8, {kN, 16 * kBlocks}, d.q4Values.data()},
                 {"w.scale", TMR_F16, {kN, kBlocks}, d.f16.data()},
                 {"b", TMR_F32, {kN}, d.f32.data()}},
                TMR_QUANT_NONE);
  EXPECT_THAT(error, HasSubstr("tensor 'w' has dtype U8 (quantized for q4), but the model "
                               "multiplies it in f32: expected F32 values"));
  // A bias is never quantized.
  error = check({{"w", TMR_F32, {kN, kK}, d.f32.data()}, {"b", TMR_I8, {kN}, d.int8Values.data()}},
                TMR_QUANT_INT8);
  EXPECT_THAT(error, HasSubstr("tensor 'b' has dtype I8 (quantized for int8), but the model "
                               "multiplies it in f32"));
}

TEST(QuantizedWeightsCheck, NamesWrongShapesBlockSizesAndMissingScales) {
  Data d;
  // q4 for blocks of 64: K = 40 fits one block a row, 32 bytes as with two
  // blocks of 32, but one scale a row.
  std::string error = check({{"w", TMR_U8, {kN, 32}, d.q4Values.data()},
                             {"w.scale", TMR_F16, {kN, 1}, d.f16.data()},
                             {"b", TMR_F32, {kN}, d.f32.data()}},
                            TMR_QUANT_Q4);
  EXPECT_THAT(error, HasSubstr("q.safetensors: tensor 'w.scale' has shape [3, 1], expected "
                               "[3, 2] (one per block of 32 of each row)"));
  // Unpacked q4 values (a byte each) instead of two a byte.
  error = check({{"w", TMR_U8, {kN, 64}, d.q4Values.data()},
                 {"w.scale", TMR_F16, {kN, kBlocks}, d.f16.data()},
                 {"b", TMR_F32, {kN}, d.f32.data()}},
                TMR_QUANT_Q4);
  EXPECT_THAT(error, HasSubstr("tensor 'w' has shape [3, 64], expected [3, 32] (two 4-bit values "
                               "a byte, K 40 in blocks of 32)"));
  error = check({{"w", TMR_I8, {kN, kK}, d.int8Values.data()}, {"b", TMR_F32, {kN}, d.f32.data()}},
                TMR_QUANT_INT8);
  EXPECT_THAT(error, HasSubstr("missing tensor 'w.scale' (expected F32 [3], the scales of 'w', "
                               "one per output channel)"));
  error = check({{"w", TMR_I8, {kN, kK}, d.int8Values.data()},
                 {"w.scale", TMR_F16, {kN}, d.f16.data()},
                 {"b", TMR_F32, {kN}, d.f32.data()}},
                TMR_QUANT_INT8);
  EXPECT_THAT(error, HasSubstr("tensor 'w.scale' has dtype F16, expected F32"));
  // A scale without quantized values is a tensor the model does not expect.
  error = check({{"w", TMR_F32, {kN, kK}, d.f32.data()},
                 {"w.scale", TMR_F32, {kN}, d.f32.data()},
                 {"b", TMR_F32, {kN}, d.f32.data()}},
                TMR_QUANT_INT8);
  EXPECT_THAT(error, HasSubstr("unexpected tensor 'w.scale' (not in the model's manifest)"));
}

/// q4OverflowWarnings for a file with weight `w` (F32 values) and a bias.
std::vector<std::string> overflowWarnings(const std::vector<float> &w, tmr_quantized quantized) {
  TempDir dir;
  std::vector<float> bias(kN, 0.0f);
  std::string path = dir.file("big.safetensors"), error;
  EXPECT_TRUE(writeSafetensors(
      path, {{"w", TMR_F32, {kN, kK}, w.data()}, {"b", TMR_F32, {kN}, bias.data()}}, &error))
      << error;
  auto file = SafetensorsFile::open(path, &error);
  EXPECT_NE(file, nullptr) << error;
  if (!file)
    return {};
  std::vector<tmr_tensor_desc> expected = manifest(quantized);
  return q4OverflowWarnings(*file, "big.safetensors", expected.data(), 2);
}

TEST(QuantizedWeightsCheck, WarnsOfWeightsWhoseQ4ScaleOverflows) {
  std::vector<float> w(kN * kK, 0.25f);
  // 524159.97 (the f32 below 524160) keeps a finite scale: no warning.
  w[0] = 524159.97f;
  EXPECT_TRUE(overflowWarnings(w, TMR_QUANT_Q4).empty());
  w[1 * kK + 5] = -524160.0f;
  w[2 * kK + 39] = 1e30f;
  std::vector<std::string> warnings = overflowWarnings(w, TMR_QUANT_Q4);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("big.safetensors: tensor 'w' has 2 values of magnitude "
                                     "524160 or more (the first, at [1, 5]): quantized to q4, its "
                                     "block's scale (the largest magnitude / 8) overflows f16"));
  // int8 scales are f32: no overflow there.
  EXPECT_TRUE(overflowWarnings(w, TMR_QUANT_INT8).empty());
}

} // namespace
