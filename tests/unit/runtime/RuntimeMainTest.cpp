//===- RuntimeMainTest.cpp - The compiled executable's command line -------===//
//
// Runs the toy executable (runtime/main.cpp + ToyModel.cpp) as a user would
// and checks exit status, stdout and stderr for good and bad invocations.
//
//===----------------------------------------------------------------------===//
#include "runtime/npy.h"
#include "runtime/safetensors.h"
#include "runtime/tmr_abi.h"
#include "tests/unit/runtime/TempDir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

using namespace tmr;
using namespace tmr::test;
using testing::ElementsAre;
using testing::HasSubstr;
using testing::Not;

namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

std::string shellQuote(const std::string &s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class RuntimeMain : public testing::Test {
protected:
  void SetUp() override {
    for (int v = 0; v < 10; ++v)
      for (int j = 0; j < 3; ++j)
        embed_.push_back(float(v * 10 + j));
    weights_ = dir_.file("weights.safetensors");
    ASSERT_TRUE(writeSafetensors(weights_,
                                 {{"embed.tokens", TMR_F32, {10, 3}, embed_.data()},
                                  {"out.bias", TMR_F32, {3}, bias_.data()}},
                                 nullptr));
  }

  /// Runs `binary args...` with stdout and stderr captured separately.
  Result run(const std::vector<std::string> &args, const std::string &binary = TOY_MODEL) {
    std::string command = shellQuote(binary);
    for (const std::string &arg : args)
      command.append(" ").append(shellQuote(arg));
    command.append(" >").append(shellQuote(dir_.file("stdout")));
    command.append(" 2>").append(shellQuote(dir_.file("stderr")));
    int raw = std::system(command.c_str());
    Result result;
    result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    result.out = readBytes(dir_.file("stdout"));
    result.err = readBytes(dir_.file("stderr"));
    return result;
  }

  TempDir dir_;
  std::string weights_;
  std::vector<float> embed_;
  std::vector<float> bias_ = {0.5f, -1.0f, 0.25f};
};

TEST_F(RuntimeMain, WritesNpyOutput) {
  std::string out = dir_.file("out.npy");
  Result r = run({"--weights", weights_, "--tokens", "3,0,9", "--output", out});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + out + ": f32 [1, 3, 3]\n");
  EXPECT_EQ(r.err, "");
  std::vector<int64_t> shape;
  std::vector<float> data;
  std::string error;
  ASSERT_TRUE(readNpyF32(out, &shape, &data, &error)) << error;
  EXPECT_THAT(shape, ElementsAre(1, 3, 3));
  EXPECT_THAT(data, ElementsAre(30.5f, 30, 32.25f, 0.5f, 0, 2.25f, 90.5f, 90, 92.25f));
}

TEST_F(RuntimeMain, AcceptsEqualsFormAndThreads) {
  std::string out = dir_.file("o.npy");
  Result r = run({"--weights=" + weights_, "--tokens=1", "--output=" + out, "--threads=1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("f32 [1, 1, 3]"));
  r = run({"--threads", "1024", "--tokens", "1", "--weights", weights_});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST_F(RuntimeMain, PrintsSummaryWithoutOutput) {
  Result r = run({"--weights", weights_, "--tokens", "2,2,1,0,5"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "output: f32 [1, 5, 3] (hidden)\n"
                   "  [0] 20.5 20 22.25\n"
                   "  [1] 20.5 20 22.25\n"
                   "  [2] 10.5 10 12.25\n"
                   "  [3] 0.5 0 2.25\n"
                   "  ... (1 more rows)\n");
}

// --bench --json: the decoding steps' median with their 10th and 90th
// percentiles around it (the spread a median alone hides); a model that does
// not decode reports none.
TEST_F(RuntimeMain, BenchReportsTheStepsSpread) {
  std::vector<float> logits(10 * 10, 0.0f), bias(10, 0.0f);
  std::string decoderWeights = dir_.file("decoder.safetensors");
  ASSERT_TRUE(writeSafetensors(decoderWeights,
                               {{"embed.tokens", TMR_F32, {10, 10}, logits.data()},
                                {"out.bias", TMR_F32, {10}, bias.data()}},
                               nullptr));
  Result r = run({"--weights", decoderWeights, "--tokens", "1", "--max-new", "5", "--bench",
                  "--bench-runs", "4", "--json"},
                 TOY_DECODER_MODEL);
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json line = nlohmann::json::parse(r.out);
  ASSERT_TRUE(line.contains("decode_p10_ms") && line.contains("decode_p90_ms")) << r.out;
  const double p10 = line["decode_p10_ms"], median = line["decode_ms"],
               p90 = line["decode_p90_ms"];
  EXPECT_GT(p10, 0.0) << r.out;
  EXPECT_LE(p10, median) << r.out;
  EXPECT_LE(median, p90) << r.out;
  r = run({"--weights", weights_, "--tokens", "1,2", "--bench", "--bench-runs", "2", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("decode_p10_ms")));
}

TEST_F(RuntimeMain, HelpGoesToStdout) {
  Result r = run({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("usage: runtime_toy_model --weights"));
  EXPECT_THAT(r.out, HasSubstr("compiled model 'toy'"));
  EXPECT_THAT(r.out, HasSubstr("each in [0, 10), 1 to 6 of them"));
  EXPECT_EQ(r.err, "");
}

TEST_F(RuntimeMain, RejectsBadTokens) {
  Result r = run({"--weights", weights_, "--tokens", "1,2,10"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "error: --tokens: token 10 (position 2) is out of range [0, 10)\n");
  EXPECT_EQ(r.out, "");
  r = run({"--weights", weights_, "--tokens", "-1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("token -1 (position 0) is out of range [0, 10)"));
  r = run({"--weights", weights_, "--tokens", "1,x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("--tokens: 'x' (position 1) is not an integer"));
  r = run({"--weights", weights_, "--tokens", "1,,2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("--tokens: '' (position 1) is not an integer"));
  r = run({"--weights", weights_, "--tokens", "99999999999999999999999"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("token 99999999999999999999999 (position 0) is out of range"));
}

TEST_F(RuntimeMain, RejectsTooManyTokens) {
  Result r = run({"--weights", weights_, "--tokens", "1,2,3,4,5,6,7"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "error: --tokens: 7 tokens given, this model accepts 1 to 6\n");
}

TEST_F(RuntimeMain, UsageErrors) {
  Result r = run({"--tokens", "1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("error: --weights is required"));
  EXPECT_THAT(r.err, HasSubstr("usage: runtime_toy_model"));
  EXPECT_EQ(r.out, "");
  r = run({"--weights", weights_});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("error: --tokens is required"));
  r = run({"--weights", weights_, "--tokens", "1", "--fast"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("error: unknown option '--fast'"));
  EXPECT_THAT(r.err, HasSubstr("usage:"));
  r = run({"--weights", weights_, "--tokens"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("error: missing value for --tokens"));
  r = run({"--weights", "--tokens", "1"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("error: missing value for --weights"));
  r = run({"--weights", weights_, "--tokens", "1", "--tokens", "2"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("error: --tokens given more than once"));
  r = run({"--weights", weights_, "--tokens", "1", "extra"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("error: unexpected argument 'extra'"));
}

TEST_F(RuntimeMain, RejectsBadThreads) {
  Result r = run({"--weights", weights_, "--tokens", "1", "--threads", "2000"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "error: --threads: 2000 is out of range [1, 1024]\n");
  // 0 is not "all cores": leaving --threads out is.
  r = run({"--weights", weights_, "--tokens", "1", "--threads", "0"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "error: --threads: 0 is out of range [1, 1024]\n");
  r = run({"--weights", weights_, "--tokens", "1", "--threads", "many"});
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("--threads: 'many' is not an integer"));
}

TEST_F(RuntimeMain, RejectsWrongWeights) {
  std::vector<float> zeros(40, 0.0f);
  std::string wrong = dir_.file("wrong.safetensors");
  ASSERT_TRUE(writeSafetensors(
      wrong,
      {{"embed.tokens", TMR_F32, {10, 4}, zeros.data()}, {"extra", TMR_F32, {1}, zeros.data()}},
      nullptr));
  Result r = run({"--weights", wrong, "--tokens", "1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "error: " + wrong + ": tensor 'embed.tokens' has shape [10, 4], expected [10, 3]\n" +
                "error: " + wrong + ": missing tensor 'out.bias' (expected F32 [3])\n" +
                "error: " + wrong + ": unexpected tensor 'extra' (not in the model's manifest)\n");
  r = run({"--weights", dir_.file("absent.safetensors"), "--tokens", "1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("absent.safetensors: cannot open: No such file or directory"));
  std::string garbage = dir_.file("garbage.safetensors");
  writeBytes(garbage, "not a safetensors file at all");
  r = run({"--weights", garbage, "--tokens", "1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("garbage.safetensors: header length"));
}

TEST_F(RuntimeMain, ReportsRunFailureAndOutputFailure) {
  Result r = run({"--weights", weights_, "--tokens", "1", "--threads", "3"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "error: toy: failure requested with 3 threads\n");
  std::string out = dir_.file("missing/out.npy");
  r = run({"--weights", weights_, "--tokens", "1", "--output", out});
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot create '" + out + "'"));
}

TEST_F(RuntimeMain, RejectsAbiMismatch) {
  Result r = run({"--weights", weights_, "--tokens", "1"}, TOY_MODEL_BAD_ABI);
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("compiled for runtime ABI version 999, this runtime implements "
                               "version " + std::to_string(TMR_ABI_VERSION)));
}

TEST_F(RuntimeMain, LinksNoCompilerLibraries) {
  FILE *pipe = popen(("ldd " + shellQuote(TOY_MODEL) + " 2>&1").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string text;
  char buffer[512];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe))
    text.append(buffer, n);
  ASSERT_EQ(pclose(pipe), 0) << text;
  EXPECT_THAT(text, HasSubstr("libc.so"));
  for (const char *lib : {"LLVM", "MLIR", "Halide", "libfmt"})
    EXPECT_THAT(text, Not(HasSubstr(lib)));
}

} // namespace
