//===- ExecutorPrelude.cpp - The fixed part of every generated executor ---===//
//
// Pasted at the top of every executor ExecutorGen writes: buffer views over
// the arena and weights, error capture, the per-kernel profile (TMR_PROFILE)
// and, for GPU targets (TMR_GPU), persistent device buffers. Kept apart from
// the generator so that each file reads as one thing.
//
//===----------------------------------------------------------------------===//

#include "compiler/ExecutorGen.h"

namespace tmc {

namespace {

/// The fixed part of every executor: buffer views and error capture.
constexpr const char *kPrelude = R"cpp(#include "runtime/tmr_abi.h"

#include "HalideRuntime.h"
#if TMR_GPU
#include "HalideRuntimeCuda.h"

#include <dlfcn.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <vector>

namespace {

/// Opt-in per-kernel timing: TMR_PROFILE=FILE (or "-" for stderr) makes every
/// kernel call time itself and the totals go to FILE as JSON at exit. Unset,
/// a call costs one predictable branch on this flag.
const char *const profilePath = std::getenv("TMR_PROFILE");
const bool profiling = profilePath && profilePath[0];

/// Time spent in one call site, per phase: 0 a prompt run (T > 1), 1 a
/// decoding step (T == 1), 2 the encoder-decoder's encode phase.
struct ProfileSlot {
  const char *kernel, *op, *site;
  double ms[3];
  long long calls[3];
};

struct ProfileTimer {
  ProfileSlot *slot = nullptr;
  int phase = 0;
  std::chrono::steady_clock::time_point start;
  ProfileTimer(ProfileSlot &s, int p) {
    if (profiling) {
      slot = &s;
      phase = p;
      start = std::chrono::steady_clock::now();
    }
  }
  ~ProfileTimer() {
    if (slot) {
      slot->ms[phase] +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      ++slot->calls[phase];
    }
  }
};

void writeJsonString(std::FILE *out, const char *text) {
  std::fputc('"', out);
  for (; *text; ++text) {
    if (*text == '"' || *text == '\\')
      std::fputc('\\', out);
    std::fputc(*text, out);
  }
  std::fputc('"', out);
}

void writeProfile(const ProfileSlot *slots, int count) {
  std::FILE *out = std::strcmp(profilePath, "-") == 0 ? stderr : std::fopen(profilePath, "w");
  if (!out) {
    std::fprintf(stderr, "warning: TMR_PROFILE: cannot write %s\n", profilePath);
    return;
  }
  static const char *const phases[] = {"prompt", "step", "encode"};
  std::fprintf(out, "[");
  bool first = true;
  for (int i = 0; i < count; ++i)
    for (int p = 0; p < 3; ++p) {
      if (!slots[i].calls[p])
        continue;
      std::fprintf(out, "%s\n  {\"call\": %d, \"kernel\": ", first ? "" : ",", i);
      writeJsonString(out, slots[i].kernel);
      std::fprintf(out, ", \"op\": ");
      writeJsonString(out, slots[i].op);
      std::fprintf(out, ", \"site\": ");
      writeJsonString(out, slots[i].site);
      std::fprintf(out, ", \"phase\": \"%s\", \"calls\": %lld, \"ms\": %.6f}", phases[p],
                   slots[i].calls[p], slots[i].ms[p]);
      first = false;
    }
  std::fprintf(out, "\n]\n");
  if (out != stderr)
    std::fclose(out);
}

/// A halide_buffer_t over memory the executor owns; extents innermost first.
/// Dense, except that a `rowStride` > 0 sets the outermost (row) stride: a
/// column range of a wider buffer (a fused projection's q, k or v).
struct View {
  halide_buffer_t buffer{};
  halide_dimension_t dims[4]{};
  View(const void *data, halide_type_code_t code, std::initializer_list<int32_t> extents,
       int32_t rowStride = 0) {
    int32_t stride = 1, i = 0;
    for (int32_t extent : extents) {
      dims[i] = halide_dimension_t(0, extent, stride);
      stride *= extent;
      ++i;
    }
    if (rowStride > 0 && i > 0)
      dims[i - 1].stride = rowStride;
    buffer.host = static_cast<uint8_t *>(const_cast<void *>(data));
    buffer.type = halide_type_t(code, 32, 1);
    buffer.dimensions = i;
    buffer.dim = dims;
  }
  halide_buffer_t *get() { return &buffer; }
#if TMR_GPU
  View(const View &) = delete;
  View &operator=(const View &) = delete;
  /// Marks memory the host wrote: Halide copies it to the GPU before a kernel reads it.
  halide_buffer_t *input() {
    buffer.set_host_dirty(true);
    return &buffer;
  }
  ~View() {
    if (buffer.device)
      halide_device_free(nullptr, &buffer);
  }
#endif
};

/// An owned array on a TMR_BUFFER_ALIGNMENT boundary.
template <typename T> struct Aligned {
  T *data = nullptr;
  bool allocate(size_t count) {
    data = static_cast<T *>(::operator new(std::max<size_t>(count, 1) * sizeof(T),
                                           std::align_val_t(TMR_BUFFER_ALIGNMENT), std::nothrow));
    return data != nullptr;
  }
  ~Aligned() {
    if (data)
      ::operator delete(data, std::align_val_t(TMR_BUFFER_ALIGNMENT));
  }
};

bool aligned(const void *pointer) {
  return reinterpret_cast<uintptr_t>(pointer) % TMR_BUFFER_ALIGNMENT == 0;
}

int kernelFailed(char *err, size_t errLen, const char *call, int code) {
  // A missing GPU is not the kernel's fault: its message stands alone.
  const char *message = tmr_halide_error_message();
  if (std::strstr(message, "this executable was compiled for CUDA"))
    std::snprintf(err, errLen, "%s", message);
  else
    std::snprintf(err, errLen, "kernel %s failed (Halide error %d): %s", call, code,
                  message[0] ? message : "no message");
  return 1;
}

#if TMR_GPU
/// After a kernel call: its output back to the host (activations live in
/// host memory between calls), every per-call device copy freed into
/// Halide's allocation cache (halide_reuse_device_allocations).
int deviceDone(std::initializer_list<View *> views) {
  for (View *view : views) {
    if (view->buffer.device_dirty())
      if (int rc = halide_copy_to_host(nullptr, view->get()))
        return rc;
    if (view->buffer.device)
      if (int rc = halide_device_free(nullptr, view->get()))
        return rc;
  }
  return 0;
}

/// The weights on the GPU, uploaded once by prepare(): the packed block on
/// the host and one persistent view (host + device copy) per weight a kernel
/// reads raw and per packed weight. Kernels never write them, so Halide
/// never copies them again.
struct DeviceWeights {
  Aligned<float> block;
  std::vector<View *> raw, packed;
  ~DeviceWeights() {
    for (View *view : raw)
      delete view;
    for (View *view : packed)
      delete view;
  }
};

int upload(View *view) {
  if (!view)
    return halide_error_code_out_of_memory;
  return halide_copy_to_device(nullptr, view->input(), halide_cuda_device_interface());
}
#endif

)cpp";

} // namespace

const char *executorPrelude() { return kPrelude; }

std::string cxxStringLiteral(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

} // namespace tmc
