//===- tmr_open.cpp - tmr_model_open for the model linked in --------------===//
//
// Its own object file: only a program that calls tmr_model_open needs a
// generated executor's tmr_compiled_model(); hosts and tests that pass a
// description to tmr_model_open_compiled link without one.
//
//===----------------------------------------------------------------------===//
#include "runtime/tmr.h"
#include "runtime/tmr_abi.h"

extern "C" tmr_status tmr_model_open(const char *weights_path, const tmr_model_params *params,
                                     tmr_model **model) {
  return tmr_model_open_compiled(tmr_compiled_model(), weights_path, params, model);
}
