//===- executor_gpu.cpp - What a GPU target's executor calls --------------===//

#include "runtime/executor_gpu.h"

#include "HalideRuntimeCuda.h"

namespace tmr::executor {

DeviceView::~DeviceView() {
  if (buffer.device)
    halide_device_free(nullptr, &buffer);
}

int deviceDone(std::initializer_list<DeviceView *> views) {
  for (DeviceView *view : views) {
    if (view->buffer.device_dirty())
      if (int rc = halide_copy_to_host(nullptr, view->get()))
        return rc;
    if (view->buffer.device)
      if (int rc = halide_device_free(nullptr, view->get()))
        return rc;
  }
  return 0;
}

DeviceWeights::~DeviceWeights() {
  for (DeviceView *view : raw)
    delete view;
  for (DeviceView *view : packed)
    delete view;
}

int upload(DeviceView *view) {
  if (!view)
    return halide_error_code_out_of_memory;
  return halide_copy_to_device(nullptr, view->input(), halide_cuda_device_interface());
}

} // namespace tmr::executor
