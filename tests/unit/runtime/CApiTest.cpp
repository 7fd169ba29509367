//===- CApiTest.cpp - The embedding API (tmr.h) over toy models -----------===//
//
// Two hand-written executors stand in for generated ones, so every value is
// predictable: an encoder (embedding lookup + bias) and a decoder whose
// output row t is the running sum of the embeddings of tokens 0..t, read back
// from its cache, with a prepare() that "packs" the embedding table (scaled
// copy) and lets the runtime drop the raw one. Compiled models go through the
// same API in tests/embed (the C example against the executable).
//
//===----------------------------------------------------------------------===//
#include "runtime/safetensors.h"
#include "runtime/tmr.h"
#include "runtime/tmr_abi.h"
#include "tests/unit/runtime/TempDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace tmr;
using namespace tmr::test;
using testing::HasSubstr;

namespace {

constexpr int64_t kVocab = 10, kMaxSeq = 6, kWidth = 3;

const tmr_tensor_desc kTensors[] = {
    {"embed.tokens", 2, {kVocab, kWidth}, TMR_F32},
    {"out.bias", 1, {kWidth}, TMR_F32},
};

/// The first token whose output row a run writes: with last_row_only, the
/// last token's row alone, at row 0 of the output (tmr_abi.h).
int64_t firstRow(const tmr_run_args *args) {
  return args->last_row_only ? args->num_tokens - 1 : 0;
}

int encoderRun(const tmr_run_args *args, char *, size_t) {
  const float *embed = static_cast<const float *>(args->weights[0]);
  const float *bias = static_cast<const float *>(args->weights[1]);
  for (int64_t t = firstRow(args); t < args->num_tokens; ++t)
    for (int64_t j = 0; j < kWidth; ++j)
      args->output[(t - firstRow(args)) * kWidth + j] =
          embed[args->tokens[t] * kWidth + j] + bias[j];
  return 0;
}

/// The encoder, but column 1 of row 0 keeps whatever the output held before
/// the run: an element a faulty model never writes.
int encoderRunSkippingOne(const tmr_run_args *args, char *err, size_t errLen) {
  const float before = args->output[1];
  int status = encoderRun(args, err, errLen);
  args->output[1] = before;
  return status;
}

/// The decoder reads its embedding only through the packed (doubled) copy.
int decoderRun(const tmr_run_args *args, char *err, size_t errLen) {
  if (args->weights[0] != nullptr || !args->prepared || !args->arena) {
    std::snprintf(err, errLen, "toy decoder: raw weight kept, or no packed copy or arena");
    return 1;
  }
  const float *packed = static_cast<const float *>(args->prepared);
  const float *bias = static_cast<const float *>(args->weights[1]);
  float *cache = static_cast<float *>(args->cache);
  for (int64_t t = 0; t < args->num_tokens; ++t) {
    int64_t row = args->offset + t;
    for (int64_t j = 0; j < kWidth; ++j) {
      cache[row * kWidth + j] = packed[args->tokens[t] * kWidth + j] / 2;
      float sum = bias[j];
      for (int64_t i = 0; i <= row; ++i)
        sum += cache[i * kWidth + j];
      if (t >= firstRow(args))
        args->output[(t - firstRow(args)) * kWidth + j] = sum;
    }
  }
  return 0;
}

int prepareDecoder(const void *const *weights, const void *const *, int32_t,
                   tmr_weight_done_fn done, void *context, void **prepared, char *, size_t) {
  auto *packed = new float[kVocab * kWidth];
  for (int64_t i = 0; i < kVocab * kWidth; ++i)
    packed[i] = 2 * static_cast<const float *>(weights[0])[i];
  if (done)
    done(context, 0, 0);
  *prepared = packed;
  return 0;
}

void releaseDecoder(void *prepared) { delete[] static_cast<float *>(prepared); }

tmr_model_desc encoderDesc() {
  tmr_model_desc desc{};
  desc.abi_version = TMR_ABI_VERSION;
  desc.name = "toy_encoder";
  desc.output_kind = "hidden";
  desc.vocab = kVocab;
  desc.max_seq = kMaxSeq;
  desc.output_width = kWidth;
  desc.num_tensors = 2;
  desc.tensors = kTensors;
  desc.run = encoderRun;
  desc.d_model = kWidth;
  desc.layers = 1;
  return desc;
}

tmr_model_desc decoderDesc() {
  tmr_model_desc desc = encoderDesc();
  desc.name = "toy_decoder";
  desc.output_kind = "logits";
  desc.cache_bytes = kMaxSeq * kWidth * sizeof(float);
  desc.run = decoderRun;
  desc.prepare = prepareDecoder;
  desc.release = releaseDecoder;
  desc.arena_floats = 64;
  desc.prepared_floats = kVocab * kWidth;
  return desc;
}

class CApi : public testing::Test {
protected:
  void SetUp() override {
    for (int v = 0; v < kVocab; ++v)
      for (int j = 0; j < kWidth; ++j)
        embed_.push_back(float(v * 10 + j));
    weights_ = dir_.file("w.safetensors");
    write(weights_, {{"embed.tokens", TMR_F32, {kVocab, kWidth}, embed_.data()},
                     {"out.bias", TMR_F32, {kWidth}, bias_.data()}});
  }
  void TearDown() override {
    tmr_session_destroy(session_);
    tmr_model_close(model_);
  }

  void write(const std::string &path, const std::vector<TensorToWrite> &tensors) {
    std::string error;
    ASSERT_TRUE(writeSafetensors(path, tensors, &error)) << error;
  }
  /// Opens `path` for `desc`; the status, with the message in lastError().
  tmr_status open(const tmr_model_desc &desc, const std::string &path) {
    return tmr_model_open_compiled(&desc, path.c_str(), nullptr, &model_);
  }
  void openSession(const tmr_model_desc &desc) {
    ASSERT_EQ(open(desc, weights_), TMR_OK) << tmr_last_error();
    ASSERT_EQ(tmr_session_create(model_, 1, &session_), TMR_OK) << tmr_last_error();
  }
  std::string lastError() const { return tmr_last_error(); }

  TempDir dir_;
  std::string weights_;
  std::vector<float> embed_, bias_ = {0.5f, 0.25f, -1.0f};
  tmr_model_desc encoder_ = encoderDesc(), decoder_ = decoderDesc();
  tmr_model *model_ = nullptr;
  tmr_session *session_ = nullptr;
};

TEST_F(CApi, EncodesAndReportsInfo) {
  openSession(encoder_);
  tmr_model_info info{};
  ASSERT_EQ(tmr_model_get_info(model_, &info), TMR_OK);
  EXPECT_STREQ(info.name, "toy_encoder");
  EXPECT_EQ(info.kind, TMR_MODEL_ENCODER);
  EXPECT_EQ(info.output_kind, TMR_OUTPUT_HIDDEN);
  EXPECT_EQ(info.vocab, kVocab);
  EXPECT_EQ(info.max_seq, kMaxSeq);
  EXPECT_EQ(info.output_width, kWidth);
  EXPECT_EQ(info.num_tensors, 2);
  EXPECT_EQ(info.weight_bytes, (kVocab * kWidth + kWidth) * 4);
  EXPECT_EQ(info.cache_bytes, 0);

  int32_t tokens[] = {4, 7};
  float out[6];
  ASSERT_EQ(tmr_encode(session_, tokens, 2, nullptr, 0, TMR_ROWS_ALL, out, 6), TMR_OK)
      << lastError();
  EXPECT_THAT(out, testing::ElementsAre(40.5f, 41.25f, 41.0f, 70.5f, 71.25f, 71.0f));
  EXPECT_EQ(lastError(), "");
  float last[3];
  ASSERT_EQ(tmr_encode(session_, tokens, 2, nullptr, 0, TMR_ROWS_LAST, last, 3), TMR_OK);
  EXPECT_THAT(last, testing::ElementsAre(70.5f, 71.25f, 71.0f));
}

// The runtime reuses its output buffer between runs of one size without
// filling it again: an element no run writes must still read NaN, never the
// last run's value, and every written one the new run's.
TEST_F(CApi, AnElementTheModelNeverWritesStaysNaNAcrossRuns) {
  tmr_model_desc leaky = encoder_;
  leaky.run = encoderRunSkippingOne;
  openSession(leaky);
  int32_t first[] = {4, 7}, second[] = {2, 3}, longer[] = {1, 2, 3};
  float out[9];
  ASSERT_EQ(tmr_encode(session_, first, 2, nullptr, 0, TMR_ROWS_ALL, out, 6), TMR_OK);
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_THAT(std::vector<float>(out + 2, out + 6),
              testing::ElementsAre(41.0f, 70.5f, 71.25f, 71.0f));
  ASSERT_EQ(tmr_encode(session_, second, 2, nullptr, 0, TMR_ROWS_ALL, out, 6), TMR_OK);
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_EQ(out[0], 20.5f);
  EXPECT_THAT(std::vector<float>(out + 2, out + 6),
              testing::ElementsAre(21.0f, 30.5f, 31.25f, 31.0f));
  ASSERT_EQ(tmr_encode(session_, longer, 3, nullptr, 0, TMR_ROWS_ALL, out, 9), TMR_OK);
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_EQ(out[8], 31.0f);
}

// Every wrong weight file gets a status and a message naming the problem.
TEST_F(CApi, MissingFileIsAnIoError) {
  EXPECT_EQ(open(encoder_, dir_.file("absent.safetensors")), TMR_ERROR_IO);
  EXPECT_THAT(lastError(), HasSubstr("absent.safetensors: cannot open"));
  EXPECT_EQ(model_, nullptr);
  EXPECT_EQ(open(encoder_, dir_.path()), TMR_ERROR_IO);
  EXPECT_THAT(lastError(), HasSubstr("not a regular file"));
}

TEST_F(CApi, GarbageFileIsBadWeights) {
  writeBytes(dir_.file("junk"), "this is not a safetensors file at all");
  EXPECT_EQ(open(encoder_, dir_.file("junk")), TMR_ERROR_BAD_WEIGHTS);
  EXPECT_THAT(lastError(), HasSubstr("junk"));
}

TEST_F(CApi, MissingTensorIsNamed) {
  std::string path = dir_.file("missing.safetensors");
  write(path, {{"embed.tokens", TMR_F32, {kVocab, kWidth}, embed_.data()}});
  EXPECT_EQ(open(encoder_, path), TMR_ERROR_BAD_WEIGHTS);
  EXPECT_THAT(lastError(), HasSubstr("missing tensor 'out.bias'"));
}

TEST_F(CApi, ExtraTensorIsNamed) {
  std::string path = dir_.file("extra.safetensors");
  write(path, {{"embed.tokens", TMR_F32, {kVocab, kWidth}, embed_.data()},
               {"out.bias", TMR_F32, {kWidth}, bias_.data()},
               {"stray.weight", TMR_F32, {kWidth}, bias_.data()}});
  EXPECT_EQ(open(encoder_, path), TMR_ERROR_BAD_WEIGHTS);
  EXPECT_THAT(lastError(), HasSubstr("'stray.weight'"));
}

TEST_F(CApi, WrongShapeIsNamed) {
  std::string path = dir_.file("shape.safetensors");
  write(path, {{"embed.tokens", TMR_F32, {kWidth, kVocab}, embed_.data()},
               {"out.bias", TMR_F32, {kWidth}, bias_.data()}});
  EXPECT_EQ(open(encoder_, path), TMR_ERROR_BAD_WEIGHTS);
  EXPECT_THAT(lastError(), HasSubstr("'embed.tokens' has shape [3, 10], expected [10, 3]"));
}

TEST_F(CApi, WrongDtypeIsNamed) {
  std::string path = dir_.file("dtype.safetensors");
  std::vector<uint16_t> half(kWidth, 0);
  write(path, {{"embed.tokens", TMR_F32, {kVocab, kWidth}, embed_.data()},
               {"out.bias", TMR_F16, {kWidth}, half.data()}});
  EXPECT_EQ(open(encoder_, path), TMR_ERROR_BAD_WEIGHTS);
  EXPECT_THAT(lastError(), HasSubstr("'out.bias'"));
  EXPECT_THAT(lastError(), HasSubstr("F16"));
}

TEST_F(CApi, WrongOffsetsAreNamed) {
  // out.bias's data_offsets span 8 bytes where F32 [3] needs 12.
  std::string header = R"({"embed.tokens":{"dtype":"F32","shape":[10,3],"data_offsets":[0,120]},)"
                       R"("out.bias":{"dtype":"F32","shape":[3],"data_offsets":[120,128]}})";
  writeBytes(dir_.file("offsets"), safetensorsBytes(header, std::string(128, '\0')));
  EXPECT_EQ(open(encoder_, dir_.file("offsets")), TMR_ERROR_BAD_WEIGHTS);
  EXPECT_THAT(lastError(), HasSubstr("tensor 'out.bias' has 8 bytes"));
}

TEST_F(CApi, OtherAbiIsRefused) {
  tmr_model_desc old = encoder_;
  old.abi_version = TMR_ABI_VERSION - 1;
  EXPECT_EQ(open(old, weights_), TMR_ERROR_ABI);
  EXPECT_THAT(lastError(), HasSubstr("ABI version"));
  EXPECT_EQ(tmr_model_open_compiled(nullptr, weights_.c_str(), nullptr, &model_), TMR_ERROR_ABI);
}

TEST_F(CApi, NullArgumentsAreRefused) {
  EXPECT_EQ(tmr_model_open_compiled(&encoder_, weights_.c_str(), nullptr, nullptr),
            TMR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tmr_model_open_compiled(&encoder_, nullptr, nullptr, &model_),
            TMR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("weights_path is NULL"));
  tmr_model_params params = tmr_model_default_params();
  params.threads = -2;
  EXPECT_EQ(tmr_model_open_compiled(&encoder_, weights_.c_str(), &params, &model_),
            TMR_ERROR_INVALID_ARGUMENT);
  tmr_model_info info;
  EXPECT_EQ(tmr_model_get_info(nullptr, &info), TMR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tmr_session_create(nullptr, 0, &session_), TMR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("model is NULL"));
  int32_t token = 1;
  float out[3];
  EXPECT_EQ(tmr_encode(nullptr, &token, 1, nullptr, 0, TMR_ROWS_ALL, out, 3),
            TMR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tmr_prefill(nullptr, &token, 1, TMR_ROWS_ALL, out, 3), TMR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tmr_decode_step(nullptr, 1, out, 3), TMR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tmr_session_reset(nullptr), TMR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("session is NULL"));
  tmr_session_destroy(nullptr); // no-ops
  tmr_model_close(nullptr);

  openSession(encoder_);
  EXPECT_EQ(tmr_encode(session_, nullptr, 1, nullptr, 0, TMR_ROWS_ALL, out, 3),
            TMR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("tokens is NULL"));
  EXPECT_EQ(tmr_encode(session_, &token, 1, nullptr, 0, TMR_ROWS_ALL, nullptr, 3),
            TMR_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(tmr_model_get_info(model_, nullptr), TMR_ERROR_INVALID_ARGUMENT);
}

TEST_F(CApi, TokensOutOfRangeAreNamed) {
  openSession(encoder_);
  int32_t tokens[] = {1, 10, 2, 3, 4, 5, 6};
  float out[7 * kWidth];
  EXPECT_EQ(tmr_encode(session_, tokens, 3, nullptr, 0, TMR_ROWS_ALL, out, 9),
            TMR_ERROR_OUT_OF_RANGE);
  EXPECT_THAT(lastError(), HasSubstr("tokens[1] = 10 is outside [0, 10)"));
  tokens[1] = -1;
  EXPECT_EQ(tmr_encode(session_, tokens, 3, nullptr, 0, TMR_ROWS_ALL, out, 9),
            TMR_ERROR_OUT_OF_RANGE);
  tokens[1] = 0;
  // More tokens than max_seq (6), and none at all.
  EXPECT_EQ(tmr_encode(session_, tokens, 7, nullptr, 0, TMR_ROWS_ALL, out, 21),
            TMR_ERROR_OUT_OF_RANGE);
  EXPECT_THAT(lastError(), HasSubstr("accepts 1 to 6"));
  EXPECT_EQ(tmr_encode(session_, tokens, 0, nullptr, 0, TMR_ROWS_ALL, out, 21),
            TMR_ERROR_OUT_OF_RANGE);
  // A length beyond the tokens, segments for a model without any, a short buffer.
  EXPECT_EQ(tmr_encode(session_, tokens, 3, nullptr, 4, TMR_ROWS_ALL, out, 9),
            TMR_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(tmr_encode(session_, tokens, 3, tokens, 0, TMR_ROWS_ALL, out, 9),
            TMR_ERROR_UNSUPPORTED);
  EXPECT_EQ(tmr_encode(session_, tokens, 3, nullptr, 0, TMR_ROWS_ALL, out, 8),
            TMR_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(lastError(), HasSubstr("output holds 8 floats; [3, 3] needs 9"));
}

TEST_F(CApi, CallsThatDoNotFitTheModelKind) {
  openSession(encoder_);
  int32_t token = 1;
  float out[3];
  EXPECT_EQ(tmr_prefill(session_, &token, 1, TMR_ROWS_ALL, out, 3), TMR_ERROR_UNSUPPORTED);
  EXPECT_THAT(lastError(), HasSubstr("use tmr_encode"));
  EXPECT_EQ(tmr_decode_step(session_, 1, out, 3), TMR_ERROR_UNSUPPORTED);
  EXPECT_EQ(tmr_set_source(session_, &token, 1, nullptr, 0), TMR_ERROR_UNSUPPORTED);
}

TEST_F(CApi, DecoderPrefillThenDecodeEqualsFullRecompute) {
  openSession(decoder_);
  tmr_model_info info{};
  ASSERT_EQ(tmr_model_get_info(model_, &info), TMR_OK);
  EXPECT_EQ(info.kind, TMR_MODEL_DECODER);
  EXPECT_EQ(info.output_kind, TMR_OUTPUT_LOGITS);
  // The raw embedding was dropped after packing: the packed copy and the bias remain.
  EXPECT_EQ(info.weight_bytes, (kVocab * kWidth + kWidth) * 4);
  EXPECT_EQ(info.cache_bytes, kMaxSeq * kWidth * 4);
  EXPECT_EQ(info.arena_bytes, 64 * 4);

  int32_t token = 3;
  float out[kMaxSeq * kWidth];
  EXPECT_EQ(tmr_decode_step(session_, 3, out, 3), TMR_ERROR_BAD_STATE);
  EXPECT_THAT(lastError(), HasSubstr("tmr_prefill first"));
  EXPECT_EQ(tmr_encode(session_, &token, 1, nullptr, 0, TMR_ROWS_ALL, out, 3),
            TMR_ERROR_UNSUPPORTED);

  int32_t sequence[] = {1, 4, 2, 9, 0};
  ASSERT_EQ(tmr_prefill(session_, sequence, 2, TMR_ROWS_LAST, out, 3), TMR_OK) << lastError();
  std::vector<float> stepped;
  for (int i = 2; i < 5; ++i) {
    ASSERT_EQ(tmr_decode_step(session_, sequence[i], out, 3), TMR_OK) << lastError();
    stepped.insert(stepped.end(), out, out + 3);
  }
  int64_t position = 0;
  ASSERT_EQ(tmr_session_position(session_, &position), TMR_OK);
  EXPECT_EQ(position, 5);
  // max_seq is 6: one more token fits, two do not.
  EXPECT_EQ(tmr_prefill(session_, sequence, 2, TMR_ROWS_ALL, out, 6), TMR_ERROR_OUT_OF_RANGE);
  EXPECT_THAT(lastError(), HasSubstr("5 tokens are already cached and max_seq is 6"));
  // A step on a full cache says so (it said "so 1 to 0 fit").
  ASSERT_EQ(tmr_decode_step(session_, 3, out, 3), TMR_OK) << lastError();
  EXPECT_EQ(tmr_decode_step(session_, 1, out, 3), TMR_ERROR_OUT_OF_RANGE);
  EXPECT_THAT(lastError(), HasSubstr("the cache is full: all max_seq (6) positions hold tokens"));

  ASSERT_EQ(tmr_session_reset(session_), TMR_OK);
  ASSERT_EQ(tmr_session_position(session_, &position), TMR_OK);
  EXPECT_EQ(position, 0);
  ASSERT_EQ(tmr_prefill(session_, sequence, 5, TMR_ROWS_ALL, out, 15), TMR_OK) << lastError();
  std::vector<float> full(out + 2 * kWidth, out + 5 * kWidth);
  EXPECT_EQ(stepped, full);
  // Row 4 is the bias plus the embeddings of all five tokens.
  EXPECT_FLOAT_EQ(full[6], 0.5f + 10 + 40 + 20 + 90 + 0);
}

TEST_F(CApi, ResetThenRerunReproduces) {
  openSession(decoder_);
  int32_t prompt[] = {5, 6, 7};
  float first[9], second[9], step1[3], step2[3];
  ASSERT_EQ(tmr_prefill(session_, prompt, 3, TMR_ROWS_ALL, first, 9), TMR_OK);
  ASSERT_EQ(tmr_decode_step(session_, 8, step1, 3), TMR_OK);
  ASSERT_EQ(tmr_session_reset(session_), TMR_OK);
  ASSERT_EQ(tmr_prefill(session_, prompt, 3, TMR_ROWS_ALL, second, 9), TMR_OK);
  ASSERT_EQ(tmr_decode_step(session_, 8, step2, 3), TMR_OK);
  EXPECT_EQ(0, std::memcmp(first, second, sizeof first));
  EXPECT_EQ(0, std::memcmp(step1, step2, sizeof step1));
}

TEST_F(CApi, SessionsOutliveTheModelHandle) {
  openSession(decoder_);
  tmr_session *other = nullptr;
  ASSERT_EQ(tmr_session_create(model_, 0, &other), TMR_OK);
  tmr_model_close(model_);
  model_ = nullptr;
  int32_t token = 2;
  float out[3];
  ASSERT_EQ(tmr_prefill(other, &token, 1, TMR_ROWS_ALL, out, 3), TMR_OK) << lastError();
  EXPECT_FLOAT_EQ(out[0], 0.5f + 20);
  tmr_session_destroy(other);
  ASSERT_EQ(tmr_prefill(session_, &token, 1, TMR_ROWS_ALL, out, 3), TMR_OK) << lastError();
}

TEST_F(CApi, StatusMessagesAreNeverNull) {
  for (int s = TMR_OK; s <= TMR_ERROR_INTERNAL + 1; ++s)
    EXPECT_NE(tmr_status_message(static_cast<tmr_status>(s)), nullptr);
  EXPECT_STREQ(tmr_status_message(TMR_ERROR_BAD_WEIGHTS), "the weights do not match the model");
}

} // namespace
