//===- tmr_capi_internal.h - C++ access behind tmr.h's handles --*- C++ -*-===//
//
// For the runtime's own C++ clients (the executable's main, --bench, beam
// search), which drive Sessions directly over a model opened through tmr.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/model.h"
#include "runtime/tmr.h"

#include <exception>
#include <new>
#include <string>

namespace tmr {

/// The loaded model behind a handle from tmr_model_open (non-null).
const Model &modelOf(const tmr_model *model);

/// What every tmr.h entry point shares (tmr_capi.cpp, tmr_capi_batch.cpp).
namespace capi {

/// Sets this thread's tmr_last_error() and returns `status`.
tmr_status fail(tmr_status status, std::string message);
void clearError();
/// One more holder of `model` (a session or batch); release() drops one and
/// frees the model with the last.
void retain(tmr_model *model);
void release(tmr_model *model);

/// Runs `body` with the last error cleared and every exception turned into
/// a status: nothing throws across the C boundary.
template <typename Body> tmr_status guarded(Body &&body) {
  clearError();
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(TMR_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    return fail(TMR_ERROR_INTERNAL, std::string("unexpected failure: ") + e.what());
  } catch (...) {
    return fail(TMR_ERROR_INTERNAL, "unexpected failure");
  }
}

} // namespace capi
} // namespace tmr
