//===- HalideErrorTest.cpp - halide_error as a message, never an abort ----===//

#include "runtime/tmr_abi.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

extern "C" void halide_error(void *user_context, const char *message);

namespace {

TEST(HalideError, KeepsTheFirstMessageUntilCleared) {
  tmr_halide_error_clear();
  EXPECT_STREQ(tmr_halide_error_message(), "");
  halide_error(nullptr, "Error: Input buffer x is accessed at 40, which is beyond the max (31)\n");
  halide_error(nullptr, "Error: a consequence of the first\n");
  EXPECT_STREQ(tmr_halide_error_message(),
               "Input buffer x is accessed at 40, which is beyond the max (31)");
  tmr_halide_error_clear();
  EXPECT_STREQ(tmr_halide_error_message(), "");
  halide_error(nullptr, "plain");
  EXPECT_STREQ(tmr_halide_error_message(), "plain");
  tmr_halide_error_clear();
}

TEST(HalideError, SaysWhenNoCudaDriverIsThere) {
  tmr_halide_error_clear();
  // What Halide's CUDA runtime reports when dlopen("libcuda.so") fails.
  halide_error(nullptr, "Error: CUDA API not found: cuInit\n");
  halide_error(nullptr, "Error: CUDA API not found: cuDeviceGetCount\n");
  halide_error(nullptr, "Error: Could not find cuda system libraries\n");
  std::string message = tmr_halide_error_message();
  EXPECT_EQ(message.rfind("this executable was compiled for CUDA, but no CUDA driver was found "
                          "(libcuda.so",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("CUDA API not found: cuInit"), std::string::npos) << message;
  tmr_halide_error_clear();
  halide_error(nullptr, "Error: CUDA error: CUDA_ERROR_NO_DEVICE cuInit failed\n");
  EXPECT_EQ(std::string(tmr_halide_error_message())
                .rfind("this executable was compiled for CUDA, but no CUDA device was found", 0),
            0u);
  tmr_halide_error_clear();
}

TEST(HalideError, MessagesAreThreadLocal) {
  tmr_halide_error_clear();
  std::thread other([] { halide_error(nullptr, "Error: on another thread\n"); });
  other.join();
  EXPECT_STREQ(tmr_halide_error_message(), "");
}

} // namespace
