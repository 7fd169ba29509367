//===- halide_error.cpp - Halide's errors as messages, never an abort -----===//
//
// Halide's runtime reports every error (a buffer out of bounds, an allocation
// that failed, a missing CUDA driver) through halide_error(), whose default
// prints the message and aborts the process. This strong definition replaces
// the runtime's weak one: it keeps the first message since the executor last
// cleared it, and the kernel that failed returns an error code that the
// executor turns into a message and the executable into exit status 1.
//
// It lives in the same object as the accessors the generated executor calls,
// so that linking the executor always pulls it out of libtmr_runtime.a.
//
//===----------------------------------------------------------------------===//

#include "runtime/tmr_abi.h"

#include <cstdio>
#include <cstring>
#include <string_view>

namespace {

thread_local char message[2048];

/// Halide's CUDA runtime loads libcuda.so with dlopen on first use; without
/// a driver every entry point comes back missing, first cuInit.
bool noCudaDriver(const char *text) {
  return std::strstr(text, "CUDA API not found") ||
         std::strstr(text, "Could not find cuda system libraries");
}

} // namespace

extern "C" void halide_error(void *, const char *text) {
  if (message[0] || !text)
    return; // the first error is the cause; the rest follow from it
  std::string_view view(text);
  while (!view.empty() && (view.back() == '\n' || view.back() == ' '))
    view.remove_suffix(1);
  if (view.substr(0, 7) == "Error: ")
    view.remove_prefix(7);
  const char *prefix = "";
  if (noCudaDriver(text))
    prefix = "this executable was compiled for CUDA, but no CUDA driver was found "
             "(libcuda.so; it needs an NVIDIA GPU and its driver): ";
  else if (std::strstr(text, "CUDA_ERROR_NO_DEVICE"))
    prefix = "this executable was compiled for CUDA, but no CUDA device was found: ";
  std::snprintf(message, sizeof message, "%s%.*s", prefix, static_cast<int>(view.size()),
                view.data());
}

extern "C" const char *tmr_halide_error_message(void) { return message; }

extern "C" void tmr_halide_error_clear(void) { message[0] = '\0'; }
