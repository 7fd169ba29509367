//===- TruncatedWeightsTest.cpp - A weights file truncated under a model --===//
//
// Runs read weights in place from the file's mapping; when the file shrinks,
// those reads raise SIGBUS. The runtime's guard (runtime/mapping_guard.h)
// must absorb that on whichever thread it happens, fail the run (tmr.h:
// TMR_ERROR_IO naming the file) and leave every other SIGBUS to the handler
// the program had before.
//
//===----------------------------------------------------------------------===//
#include "runtime/mapping_guard.h"
#include "runtime/memory.h"
#include "runtime/safetensors.h"
#include "runtime/tmr.h"
#include "runtime/tmr_abi.h"
#include "tests/unit/runtime/TempDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

using namespace tmr;
using namespace tmr::test;
using testing::HasSubstr;

namespace {

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

/// A read-only private mapping of `pages` pages of `path`, filled with 0x11.
const unsigned char *mapPages(const std::string &path, size_t pages) {
  writeBytes(path, std::string(pages * kPage, '\x11'));
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  void *map = ::mmap(nullptr, pages * kPage, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  EXPECT_NE(map, MAP_FAILED);
  return static_cast<const unsigned char *>(map);
}

/// Reads one byte on another thread, as Halide's workers read weights.
unsigned char readOnWorker(const unsigned char *p) {
  unsigned char value = 0xff;
  std::thread([&] { value = *static_cast<const volatile unsigned char *>(p); }).join();
  return value;
}

TEST(MappingGuard, AbsorbsAFaultInItsRangeOnAnyThread) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  const unsigned char *map = mapPages(path, 3);
  {
    MappingGuard guard(map, 3 * kPage, path, 3 * kPage);
    EXPECT_FALSE(guard.lost());
    EXPECT_EQ(lostWeightsError({map + 2 * kPage}), "");
    std::filesystem::resize_file(path, kPage);
    EXPECT_EQ(readOnWorker(map), 0x11); // still in the file
    EXPECT_EQ(readOnWorker(map + 2 * kPage + 5), 0); // gone: zeros, no signal
    EXPECT_TRUE(guard.lost());
    EXPECT_EQ(map[kPage + 1], 0); // every later page reads as zeros too
    unsigned char elsewhere = 0;
    EXPECT_EQ(lostWeightsError({&elsewhere, nullptr}), "");
    EXPECT_THAT(lostWeightsError({&elsewhere, map + 7}),
                HasSubstr(path + ": the file was truncated while the model was reading it (it had " +
                          formatBytes(3 * kPage) + " when opened, " + formatBytes(kPage) +
                          " now)"));
  }
  ::munmap(const_cast<unsigned char *>(map), 3 * kPage);
}

// The stage the program had reached when its own handler ran.
std::atomic<int> stage{0};
void programHandler(int) { _exit(40 + stage.load()); }

TEST(MappingGuardDeathTest, ChainsOtherFaultsToTheProgramsHandler) {
  // A fresh process: the runtime's handler must be installed after the
  // program's, as when a program embedding tmr.h opens its first model.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempDir dir;
  EXPECT_EXIT(
      {
        struct sigaction own {};
        own.sa_handler = programHandler;
        sigemptyset(&own.sa_mask);
        sigaction(SIGBUS, &own, nullptr);
        const unsigned char *guarded = mapPages(dir.file("guarded"), 2);
        const unsigned char *unguarded = mapPages(dir.file("unguarded"), 2);
        MappingGuard guard(guarded, 2 * kPage, dir.file("guarded"), 2 * kPage);
        std::filesystem::resize_file(dir.file("guarded"), 0);
        std::filesystem::resize_file(dir.file("unguarded"), 0);
        std::filesystem::remove_all(dir.path()); // this process ends in _exit
        stage = 1; // a fault here would end with 41
        if (readOnWorker(guarded + kPage) != 0 || !guard.lost())
          _exit(3);
        stage = 2; // the program's own fault: its handler, 42
        (void)readOnWorker(unguarded + kPage);
        _exit(4);
      },
      testing::ExitedWithCode(42), "");
}

// The C API: a toy encoder (embedding lookup + bias) that reads the weights
// on a worker thread, on a file written by tmc's writer, whose aligned data
// the model reads in place from the mapping.
constexpr int64_t kVocab = 10, kWidth = 3;
const tmr_tensor_desc kTensors[] = {
    {"embed.tokens", 2, {kVocab, kWidth}, TMR_F32},
    {"out.bias", 1, {kWidth}, TMR_F32},
};

int encodeOnWorker(const tmr_run_args *args, char *, size_t) {
  std::thread([args] {
    auto *embed = static_cast<const float *>(args->weights[0]);
    auto *bias = static_cast<const float *>(args->weights[1]);
    const int64_t first = args->last_row_only ? args->num_tokens - 1 : 0; // tmr_abi.h
    for (int64_t t = first; t < args->num_tokens; ++t)
      for (int64_t j = 0; j < kWidth; ++j)
        args->output[(t - first) * kWidth + j] = embed[args->tokens[t] * kWidth + j] + bias[j];
  }).join();
  return 0;
}

tmr_model_desc encoderDesc() {
  tmr_model_desc desc{};
  desc.abi_version = TMR_ABI_VERSION;
  desc.name = "toy_encoder";
  desc.output_kind = "hidden";
  desc.vocab = kVocab;
  desc.max_seq = 4;
  desc.output_width = kWidth;
  desc.num_tensors = 2;
  desc.tensors = kTensors;
  desc.run = encodeOnWorker;
  return desc;
}

std::string writeWeights(const std::string &path) {
  std::vector<float> embed(kVocab * kWidth, 1.0f), bias(kWidth, 0.5f);
  std::string error;
  EXPECT_TRUE(writeSafetensors(path,
                               {{"embed.tokens", TMR_F32, {kVocab, kWidth}, embed.data()},
                                {"out.bias", TMR_F32, {kWidth}, bias.data()}},
                               &error))
      << error;
  return path;
}

TEST(CApiTruncatedWeights, FailTheRunsWithAnIoErrorAndSpareOtherModels) {
  TempDir dir;
  tmr_model_desc desc = encoderDesc();
  std::string path = writeWeights(dir.file("w.safetensors"));
  std::string intact = writeWeights(dir.file("intact.safetensors"));
  tmr_model *model = nullptr, *other = nullptr;
  tmr_session *session = nullptr, *otherSession = nullptr;
  ASSERT_EQ(tmr_model_open_compiled(&desc, path.c_str(), nullptr, &model), TMR_OK);
  ASSERT_EQ(tmr_model_open_compiled(&desc, intact.c_str(), nullptr, &other), TMR_OK);
  ASSERT_EQ(tmr_session_create(model, 1, &session), TMR_OK);
  ASSERT_EQ(tmr_session_create(other, 1, &otherSession), TMR_OK);
  int32_t tokens[] = {2, 5};
  float out[6];
  ASSERT_EQ(tmr_encode(session, tokens, 2, nullptr, 0, TMR_ROWS_ALL, out, 6), TMR_OK)
      << tmr_last_error();
  EXPECT_EQ(out[0], 1.5f);

  std::filesystem::resize_file(path, 0);
  std::fill(std::begin(out), std::end(out), -7.0f);
  EXPECT_EQ(tmr_encode(session, tokens, 2, nullptr, 0, TMR_ROWS_ALL, out, 6), TMR_ERROR_IO);
  EXPECT_THAT(tmr_last_error(),
              HasSubstr(path + ": the file was truncated while the model was reading it"));
  EXPECT_THAT(out, testing::Each(-7.0f)); // outputs are written only on TMR_OK
  // The weights stay lost: every later run fails the same way.
  EXPECT_EQ(tmr_encode(session, tokens, 1, nullptr, 0, TMR_ROWS_ALL, out, 6), TMR_ERROR_IO);
  // A model on another file is not affected.
  ASSERT_EQ(tmr_encode(otherSession, tokens, 2, nullptr, 0, TMR_ROWS_ALL, out, 6), TMR_OK)
      << tmr_last_error();
  EXPECT_EQ(out[5], 1.5f);

  tmr_session_destroy(session);
  tmr_session_destroy(otherSession);
  tmr_model_close(model);
  tmr_model_close(other);
}

} // namespace
