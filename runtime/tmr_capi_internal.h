//===- tmr_capi_internal.h - C++ access behind tmr.h's handles --*- C++ -*-===//
//
// For the runtime's own C++ clients (the executable's main, --bench, beam
// search), which drive Sessions directly over a model opened through tmr.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/model.h"
#include "runtime/tmr.h"

namespace tmr {

/// The loaded model behind a handle from tmr_model_open (non-null).
const Model &modelOf(const tmr_model *model);

} // namespace tmr
