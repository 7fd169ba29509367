//===- tmr_capi_batch.cpp - tmr.h's batches on top of Batch ---------------===//
//
// Arguments are checked here, naming the input, before Batch (batch.h)
// runs them; Batch checks slots, tokens and positions itself.
//
//===----------------------------------------------------------------------===//
#include "runtime/batch.h"
#include "runtime/tmr.h"
#include "runtime/tmr_capi_internal.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

using tmr::capi::fail;
using tmr::capi::guarded;

struct tmr_batch {
  tmr_model *owner;
  tmr::Batch batch;
  tmr::AlignedVector<float> output;

  tmr_batch(tmr_model *owner, int32_t slots, int32_t threads)
      : owner(owner), batch(tmr::modelOf(owner).desc(), tmr::modelOf(owner).weights(),
                            tmr::modelOf(owner).prepared(), slots, threads) {}
};

namespace {

tmr_status needBatch(const tmr_batch *batch) {
  return batch ? TMR_OK : fail(TMR_ERROR_INVALID_ARGUMENT, "batch is NULL");
}

tmr_status needSlot(const tmr_batch *batch, int32_t slot) {
  if (slot < 0 || slot >= batch->batch.slots())
    return fail(TMR_ERROR_OUT_OF_RANGE, "slot " + std::to_string(slot) + " is outside [0, " +
                                            std::to_string(batch->batch.slots() - 1) + "]");
  return TMR_OK;
}

} // namespace

extern "C" {

tmr_status tmr_batch_create(tmr_model *model, int32_t slots, int32_t threads, tmr_batch **batch) {
  return guarded([&] {
    if (!batch)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "batch (the result pointer) is NULL");
    *batch = nullptr;
    if (!model)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "model is NULL");
    if (slots < 1 || slots > 65536)
      return fail(TMR_ERROR_INVALID_ARGUMENT,
                  "slots is " + std::to_string(slots) + "; give 1 to 65536");
    if (threads < 0)
      return fail(TMR_ERROR_INVALID_ARGUMENT,
                  "threads is " + std::to_string(threads) + "; give 0 (the default) or more");
    auto created = std::make_unique<tmr_batch>(model, slots, threads);
    tmr::capi::retain(model);
    *batch = created.release();
    return TMR_OK;
  });
}

void tmr_batch_destroy(tmr_batch *batch) {
  if (!batch)
    return;
  tmr_model *owner = batch->owner;
  delete batch;
  tmr::capi::release(owner);
}

tmr_status tmr_batch_reset_slot(tmr_batch *batch, int32_t slot) {
  return guarded([&] {
    if (tmr_status status = needBatch(batch))
      return status;
    if (tmr_status status = needSlot(batch, slot))
      return status;
    batch->batch.reset(slot);
    return TMR_OK;
  });
}

tmr_status tmr_batch_set_source(tmr_batch *batch, int32_t slot, const int32_t *source,
                                int64_t num_source, const int32_t *segments, int64_t length) {
  return guarded([&] {
    if (tmr_status status = needBatch(batch))
      return status;
    const tmr_model_desc &desc = batch->batch.model();
    if (!desc.encoder_decoder)
      return fail(TMR_ERROR_UNSUPPORTED,
                  "tmr_batch_set_source is for encoder-decoder models; this one decodes no source");
    if (tmr_status status = needSlot(batch, slot))
      return status;
    if (!source || num_source < 1 || num_source > desc.max_seq)
      return fail(source ? TMR_ERROR_OUT_OF_RANGE : TMR_ERROR_INVALID_ARGUMENT,
                  source ? "num_source is " + std::to_string(num_source) + "; give 1 to " +
                               std::to_string(desc.max_seq)
                         : std::string("source is NULL"));
    if (segments && desc.segments == 0)
      return fail(TMR_ERROR_UNSUPPORTED, "this model takes no segment ids (pass NULL)");
    std::string error;
    if (!batch->batch.setSource(slot, std::vector<int32_t>(source, source + num_source),
                                segments ? std::vector<int32_t>(segments, segments + num_source)
                                         : std::vector<int32_t>{},
                                length, &error))
      // A slot in use is the caller's mistake; the rest are values out of range.
      return fail(batch->batch.position(slot) != 0 ? TMR_ERROR_INVALID_ARGUMENT
                                                   : TMR_ERROR_OUT_OF_RANGE,
                  error);
    return TMR_OK;
  });
}

tmr_status tmr_batch_position(const tmr_batch *batch, int32_t slot, int64_t *position) {
  return guarded([&] {
    if (tmr_status status = needBatch(batch))
      return status;
    if (!position)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "position is NULL");
    if (tmr_status status = needSlot(batch, slot))
      return status;
    *position = batch->batch.position(slot);
    return TMR_OK;
  });
}

tmr_status tmr_batch_run(tmr_batch *batch, const tmr_sequence_input *inputs, int32_t count,
                         tmr_rows rows, float *output, size_t output_floats) {
  return guarded([&] {
    if (tmr_status status = needBatch(batch))
      return status;
    if (!inputs || count < 1)
      return fail(TMR_ERROR_INVALID_ARGUMENT,
                  inputs ? "count is " + std::to_string(count) + "; give 1 or more"
                         : std::string("inputs is NULL"));
    if (rows != TMR_ROWS_ALL && rows != TMR_ROWS_LAST)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "rows is " + std::to_string(static_cast<int>(rows)) +
                                                  "; TMR_ROWS_ALL or TMR_ROWS_LAST");
    const tmr_model_desc &desc = batch->batch.model();
    if (rows == TMR_ROWS_LAST && desc.output_rows != 0)
      return fail(TMR_ERROR_UNSUPPORTED, "TMR_ROWS_LAST: this model's output is " +
                                             std::to_string(desc.output_rows) +
                                             " row(s) per input, not one per token");
    std::vector<tmr::Batch::Input> given;
    int64_t outRows = 0;
    for (int32_t i = 0; i < count; ++i) {
      const tmr_sequence_input &in = inputs[i];
      if (in.num_tokens < 1 || !in.tokens)
        return fail(TMR_ERROR_INVALID_ARGUMENT,
                    "inputs[" + std::to_string(i) + "]: " +
                        (in.tokens
                             ? "num_tokens is " + std::to_string(in.num_tokens) + "; give 1 or more"
                             : std::string("tokens is NULL")));
      if (tmr_status status = needSlot(batch, in.slot))
        return fail(status, "inputs[" + std::to_string(i) + "]: " + tmr_last_error());
      given.push_back({in.slot, in.tokens, in.num_tokens, in.segments, in.length});
      outRows += batch->batch.outputRows(in.num_tokens, rows == TMR_ROWS_LAST);
    }
    const size_t needed = static_cast<size_t>(outRows * desc.output_width);
    if (output && output_floats < needed)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "output_floats is " + std::to_string(output_floats) +
                                                  "; the run writes " + std::to_string(needed));
    if (!output && output_floats != 0)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "output is NULL but output_floats is not 0");
    std::string error;
    tmr::Batch::Failure failure = tmr::Batch::Failure::Model;
    if (!batch->batch.run(given, rows == TMR_ROWS_LAST, &batch->output, &error, &failure))
      return fail(failure == tmr::Batch::Failure::Input    ? TMR_ERROR_INVALID_ARGUMENT
                  : failure == tmr::Batch::Failure::Range  ? TMR_ERROR_OUT_OF_RANGE
                  : failure == tmr::Batch::Failure::Memory ? TMR_ERROR_OUT_OF_MEMORY
                  : failure == tmr::Batch::Failure::Io     ? TMR_ERROR_IO
                                                           : TMR_ERROR_MODEL,
                  error);
    if (output)
      std::memcpy(output, batch->output.data(), needed * sizeof(float));
    return TMR_OK;
  });
}

} // extern "C"
