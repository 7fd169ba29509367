//===- tmr_capi.cpp - tmr.h on top of Model and Session -------------------===//
//
// Every entry point checks its arguments against the model before anything
// reaches the generated code (which trusts them), converts failures into a
// status plus a thread-local message, and catches every exception: nothing
// throws across the C boundary.
//
//===----------------------------------------------------------------------===//
#include "runtime/tmr.h"

#include "runtime/model.h"
#include "runtime/session.h"
#include "runtime/tmr_capi_internal.h"

#include <atomic>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

struct tmr_model {
  std::unique_ptr<tmr::Model> model;
  /// The user's handle plus one per live session; the last one frees it.
  std::atomic<int64_t> references{1};
};

struct tmr_session {
  tmr_model *owner;
  tmr::Session session;
  bool sourceSet = false;
  /// An encoder-decoder's source segment ids (empty: all 0), for its first run.
  std::vector<int32_t> sourceSegments;
  std::vector<int32_t> tokens, segments;
  tmr::AlignedVector<float> output;

  tmr_session(tmr_model *owner, int32_t threads)
      : owner(owner), session(owner->model->desc(), owner->model->weights(),
                              owner->model->prepared(), threads) {}
};

namespace {

thread_local std::string lastError;

using tmr::capi::fail;
using tmr::capi::guarded;

using tmr::capi::release;
using tmr::capi::retain;

tmr_model_kind kindOf(const tmr_model_desc &desc) {
  if (desc.encoder_decoder)
    return TMR_MODEL_ENCODER_DECODER;
  return desc.cache_bytes > 0 ? TMR_MODEL_DECODER : TMR_MODEL_ENCODER;
}

const char *kindName(tmr_model_kind kind) {
  switch (kind) {
  case TMR_MODEL_ENCODER: return "an encoder";
  case TMR_MODEL_DECODER: return "a decoder";
  case TMR_MODEL_ENCODER_DECODER: return "an encoder-decoder";
  }
  return "this";
}

/// Token ids (or segment ids) in [0, limit); `what` names them in the message.
tmr_status checkIds(const char *what, const int32_t *ids, int64_t count, int64_t limit) {
  for (int64_t i = 0; i < count; ++i)
    if (ids[i] < 0 || ids[i] >= limit)
      return fail(TMR_ERROR_OUT_OF_RANGE, std::string(what) + "[" + std::to_string(i) + "] = " +
                                              std::to_string(ids[i]) + " is outside [0, " +
                                              std::to_string(limit) + ")");
  return TMR_OK;
}

tmr_status checkCount(const char *what, const void *ids, int64_t count, int64_t room,
                      int64_t maxSeq) {
  if (!ids)
    return fail(TMR_ERROR_INVALID_ARGUMENT, std::string(what) + " is NULL");
  // "so 1 to 0 fit" would hide that nothing can be added at all.
  if (room == 0 && count >= 1)
    return fail(TMR_ERROR_OUT_OF_RANGE,
                "the cache is full: all max_seq (" + std::to_string(maxSeq) +
                    ") positions hold tokens already, so no " + what +
                    " fit (tmr_session_reset starts a new sequence)");
  if (count < 1 || count > room)
    return fail(TMR_ERROR_OUT_OF_RANGE,
                std::to_string(count) + " " + what + ": " +
                    (room < maxSeq ? std::to_string(maxSeq - room) +
                                         " tokens are already cached and max_seq is " +
                                         std::to_string(maxSeq) + ", so 1 to " +
                                         std::to_string(room) + " fit"
                                   : "this model accepts 1 to " + std::to_string(maxSeq)));
  return TMR_OK;
}

/// The rows a run returns and the floats they need; checks the caller's buffer.
tmr_status checkOutput(const tmr_model_desc &desc, int64_t numTokens, tmr_rows rows,
                       const float *output, size_t outputFloats) {
  if (rows != TMR_ROWS_ALL && rows != TMR_ROWS_LAST)
    return fail(TMR_ERROR_INVALID_ARGUMENT, "rows must be TMR_ROWS_ALL or TMR_ROWS_LAST");
  if (!output) {
    if (outputFloats != 0)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "output is NULL but output_floats is " +
                                                  std::to_string(outputFloats));
    return TMR_OK;
  }
  int64_t count = rows == TMR_ROWS_LAST ? 1 : desc.output_rows ? desc.output_rows : numTokens;
  uint64_t needed = static_cast<uint64_t>(count * desc.output_width);
  if (outputFloats < needed)
    return fail(TMR_ERROR_INVALID_ARGUMENT,
                "output holds " + std::to_string(outputFloats) + " floats; [" +
                    std::to_string(count) + ", " + std::to_string(desc.output_width) +
                    "] needs " + std::to_string(needed));
  return TMR_OK;
}

/// One run of the model over tokens already checked; copies the wanted rows out.
/// `segments` holds one id per token (an encoder-decoder's: per source
/// token), or nothing for all 0.
tmr_status runChecked(tmr_session *s, const int32_t *tokens, int64_t numTokens,
                      std::vector<int32_t> segments, tmr_rows rows, float *output) {
  const tmr_model_desc &desc = s->owner->model->desc();
  s->tokens.assign(tokens, tokens + numTokens);
  s->segments = std::move(segments);
  std::string error;
  // The last row alone: a per-token output's final kernel (the LM head) runs
  // for that row only.
  const bool lastRowOnly = rows == TMR_ROWS_LAST && desc.output_rows == 0;
  if (!s->session.run(s->tokens, s->segments, &s->output, &error, lastRowOnly))
    return fail(s->session.weightsLost()                          ? TMR_ERROR_IO
                : error.find("out of memory") != std::string::npos ? TMR_ERROR_OUT_OF_MEMORY
                                                                   : TMR_ERROR_MODEL,
                error);
  if (output) {
    size_t width = static_cast<size_t>(desc.output_width);
    const float *from = rows == TMR_ROWS_LAST ? s->output.data() + s->output.size() - width
                                              : s->output.data();
    size_t floats = rows == TMR_ROWS_LAST ? width : s->output.size();
    std::memcpy(output, from, floats * sizeof(float));
  }
  return TMR_OK;
}

tmr_status needSession(const tmr_session *session) {
  return session ? TMR_OK : fail(TMR_ERROR_INVALID_ARGUMENT, "session is NULL");
}

} // namespace

namespace tmr {

const Model &modelOf(const tmr_model *model) { return *model->model; }

namespace capi {

tmr_status fail(tmr_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

void clearError() { lastError.clear(); }

void retain(tmr_model *model) { model->references.fetch_add(1); }

void release(tmr_model *model) {
  if (model && model->references.fetch_sub(1) == 1)
    delete model;
}

} // namespace capi
} // namespace tmr

extern "C" {

const char *tmr_status_message(tmr_status status) {
  switch (status) {
  case TMR_OK: return "ok";
  case TMR_ERROR_INVALID_ARGUMENT: return "invalid argument";
  case TMR_ERROR_OUT_OF_RANGE: return "out of range";
  case TMR_ERROR_BAD_STATE: return "call out of order";
  case TMR_ERROR_UNSUPPORTED: return "not supported by this model";
  case TMR_ERROR_IO: return "cannot read the weight file";
  case TMR_ERROR_BAD_WEIGHTS: return "the weights do not match the model";
  case TMR_ERROR_ABI: return "the model was compiled for another runtime";
  case TMR_ERROR_OUT_OF_MEMORY: return "out of memory";
  case TMR_ERROR_MODEL: return "the model failed";
  case TMR_ERROR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

const char *tmr_last_error(void) { return lastError.c_str(); }

tmr_model_params tmr_model_default_params(void) {
  tmr_model_params params;
  params.threads = 0;
  return params;
}

tmr_status tmr_model_open_compiled(const struct tmr_model_desc *compiled, const char *weights_path,
                                   const tmr_model_params *params, tmr_model **model) {
  return guarded([&] {
    if (!model)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "model (the result pointer) is NULL");
    *model = nullptr;
    if (!weights_path)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "weights_path is NULL");
    tmr_model_params chosen = params ? *params : tmr_model_default_params();
    if (chosen.threads < 0)
      return fail(TMR_ERROR_INVALID_ARGUMENT,
                  "params.threads is " + std::to_string(chosen.threads) + "; give 0 or more");
    tmr_status status = TMR_OK;
    std::string error;
    std::unique_ptr<tmr::Model> loaded =
        tmr::Model::open(compiled, weights_path, chosen.threads, &status, &error);
    if (!loaded)
      return fail(status, error);
    auto *handle = new tmr_model;
    handle->model = std::move(loaded);
    *model = handle;
    return TMR_OK;
  });
}

void tmr_model_close(tmr_model *model) { release(model); }

tmr_status tmr_model_get_info(const tmr_model *model, tmr_model_info *info) {
  return guarded([&] {
    if (!model)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "model is NULL");
    if (!info)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "info is NULL");
    const tmr::Model &m = *model->model;
    const tmr_model_desc &desc = m.desc();
    tmr_model_info out{};
    out.name = desc.name;
    out.kind = kindOf(desc);
    std::string kind = desc.output_kind;
    out.output_kind = kind == "logits"    ? TMR_OUTPUT_LOGITS
                      : kind == "classes" ? TMR_OUTPUT_CLASSES
                                          : TMR_OUTPUT_HIDDEN;
    out.vocab = desc.vocab;
    out.max_seq = desc.max_seq;
    out.d_model = desc.d_model;
    out.layers = desc.layers;
    out.output_width = desc.output_width;
    out.output_rows = desc.output_rows;
    out.segments = desc.segments;
    out.num_tensors = desc.num_tensors;
    out.weight_bytes = m.weightBytes();
    out.cache_bytes = desc.cache_bytes;
    out.arena_bytes = desc.arena_floats * static_cast<int64_t>(sizeof(float));
    out.max_batch = desc.max_batch > 1 ? desc.max_batch : 1;
    *info = out;
    return TMR_OK;
  });
}

tmr_status tmr_session_create(tmr_model *model, int32_t threads, tmr_session **session) {
  return guarded([&] {
    if (!session)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "session (the result pointer) is NULL");
    *session = nullptr;
    if (!model)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "model is NULL");
    if (threads < 0)
      return fail(TMR_ERROR_INVALID_ARGUMENT,
                  "threads is " + std::to_string(threads) + "; give 0 (the default) or more");
    auto created = std::make_unique<tmr_session>(model, threads);
    retain(model);
    *session = created.release();
    return TMR_OK;
  });
}

void tmr_session_destroy(tmr_session *session) {
  if (!session)
    return;
  tmr_model *owner = session->owner;
  delete session;
  release(owner);
}

tmr_status tmr_session_reset(tmr_session *session) {
  return guarded([&] {
    if (tmr_status status = needSession(session))
      return status;
    session->session.reset();
    session->sourceSet = false;
    return TMR_OK;
  });
}

tmr_status tmr_session_position(const tmr_session *session, int64_t *position) {
  return guarded([&] {
    if (tmr_status status = needSession(session))
      return status;
    if (!position)
      return fail(TMR_ERROR_INVALID_ARGUMENT, "position is NULL");
    *position = session->session.cached();
    return TMR_OK;
  });
}

tmr_status tmr_encode(tmr_session *session, const int32_t *tokens, int64_t num_tokens,
                      const int32_t *segments, int64_t length, tmr_rows rows, float *output,
                      size_t output_floats) {
  return guarded([&] {
    if (tmr_status status = needSession(session))
      return status;
    const tmr_model_desc &desc = session->owner->model->desc();
    tmr_model_kind kind = kindOf(desc);
    if (kind != TMR_MODEL_ENCODER)
      return fail(TMR_ERROR_UNSUPPORTED,
                  std::string("tmr_encode runs encoder models; this is ") + kindName(kind) +
                      (kind == TMR_MODEL_DECODER ? " (use tmr_prefill)"
                                                 : " (use tmr_set_source, then tmr_prefill)"));
    if (tmr_status status = checkCount("tokens", tokens, num_tokens, desc.max_seq, desc.max_seq))
      return status;
    if (tmr_status status = checkIds("tokens", tokens, num_tokens, desc.vocab))
      return status;
    if (segments && desc.segments == 0)
      return fail(TMR_ERROR_UNSUPPORTED, "this model takes no segment ids (pass NULL)");
    if (segments)
      if (tmr_status status = checkIds("segments", segments, num_tokens, desc.segments))
        return status;
    if (length < 0 || length > num_tokens)
      return fail(TMR_ERROR_OUT_OF_RANGE, "length " + std::to_string(length) +
                                              " is outside [0, " + std::to_string(num_tokens) +
                                              "] (0: all tokens are valid)");
    if (tmr_status status = checkOutput(desc, num_tokens, rows, output, output_floats))
      return status;
    session->session.reset();
    session->session.setLength(length);
    std::vector<int32_t> ids;
    if (segments)
      ids.assign(segments, segments + num_tokens);
    return runChecked(session, tokens, num_tokens, std::move(ids), rows, output);
  });
}

tmr_status tmr_set_source(tmr_session *session, const int32_t *source, int64_t num_source,
                          const int32_t *segments, int64_t length) {
  return guarded([&] {
    if (tmr_status status = needSession(session))
      return status;
    const tmr_model_desc &desc = session->owner->model->desc();
    if (!desc.encoder_decoder)
      return fail(TMR_ERROR_UNSUPPORTED,
                  std::string("tmr_set_source is for encoder-decoder models; this is ") +
                      kindName(kindOf(desc)));
    if (tmr_status status = checkCount("source tokens", source, num_source, desc.max_seq,
                                       desc.max_seq))
      return status;
    if (tmr_status status = checkIds("source", source, num_source, desc.vocab))
      return status;
    if (segments && desc.segments == 0)
      return fail(TMR_ERROR_UNSUPPORTED, "this model takes no segment ids (pass NULL)");
    if (segments)
      if (tmr_status status = checkIds("segments", segments, num_source, desc.segments))
        return status;
    if (length < 0 || length > num_source)
      return fail(TMR_ERROR_OUT_OF_RANGE, "length " + std::to_string(length) +
                                              " is outside [0, " + std::to_string(num_source) +
                                              "] (0: the whole source is valid)");
    session->session.reset();
    session->session.setSource(std::vector<int32_t>(source, source + num_source));
    // Source segment ids go to the first run, which encodes the source.
    session->sourceSegments.clear();
    if (segments)
      session->sourceSegments.assign(segments, segments + num_source);
    session->session.setLength(length);
    session->sourceSet = true;
    return TMR_OK;
  });
}

tmr_status tmr_prefill(tmr_session *session, const int32_t *tokens, int64_t num_tokens,
                       tmr_rows rows, float *output, size_t output_floats) {
  return guarded([&] {
    if (tmr_status status = needSession(session))
      return status;
    const tmr_model_desc &desc = session->owner->model->desc();
    tmr_model_kind kind = kindOf(desc);
    if (kind == TMR_MODEL_ENCODER)
      return fail(TMR_ERROR_UNSUPPORTED,
                  "tmr_prefill runs decoders; this is an encoder (use tmr_encode)");
    if (kind == TMR_MODEL_ENCODER_DECODER && !session->sourceSet)
      return fail(TMR_ERROR_BAD_STATE,
                  "this encoder-decoder model needs its source first (tmr_set_source)");
    int64_t room = desc.max_seq - session->session.cached();
    if (tmr_status status = checkCount("tokens", tokens, num_tokens, room, desc.max_seq))
      return status;
    if (tmr_status status = checkIds("tokens", tokens, num_tokens, desc.vocab))
      return status;
    if (tmr_status status = checkOutput(desc, num_tokens, rows, output, output_floats))
      return status;
    // An encoder-decoder's first run encodes the source with its segment ids.
    std::vector<int32_t> segments;
    if (kind == TMR_MODEL_ENCODER_DECODER && session->session.cached() == 0)
      segments = session->sourceSegments;
    return runChecked(session, tokens, num_tokens, std::move(segments), rows, output);
  });
}

tmr_status tmr_decode_step(tmr_session *session, int32_t token, float *output,
                           size_t output_floats) {
  return guarded([&] {
    if (tmr_status status = needSession(session))
      return status;
    if (kindOf(session->owner->model->desc()) == TMR_MODEL_ENCODER)
      return fail(TMR_ERROR_UNSUPPORTED,
                  "tmr_decode_step runs decoders; this is an encoder (use tmr_encode)");
    if (session->session.cached() == 0)
      return fail(TMR_ERROR_BAD_STATE,
                  "tmr_decode_step continues a sequence: run tmr_prefill first");
    return tmr_prefill(session, &token, 1, TMR_ROWS_LAST, output, output_floats);
  });
}

} // extern "C"
