/*===- tmr.h - Embedding a compiled model: the runtime's C API -------------===*
 *
 * `tmc compile MODEL.tm --emit=lib -o DIR/NAME` writes DIR/libNAME.a (the
 * model's kernels, its executor and this runtime) and DIR/NAME.h (this header
 * plus the model's sizes as macros). A C program then needs only
 *
 *   cc -std=c99 main.c -IDIR DIR/libNAME.a -lstdc++ -lm -lpthread -ldl
 *
 * Usage, for a decoder (error handling shortened):
 *
 *   tmr_model *model;
 *   if (tmr_model_open("w.safetensors", NULL, &model) != TMR_OK)
 *     fprintf(stderr, "%s\n", tmr_last_error());
 *   tmr_model_info info;
 *   tmr_model_get_info(model, &info);
 *   tmr_session *session;
 *   tmr_session_create(model, 0, &session);
 *   float *logits = malloc(sizeof(float) * info.output_width);   // [vocab]
 *   tmr_prefill(session, prompt, n, TMR_ROWS_LAST, logits, info.output_width);
 *   for (...) {                  // pick `next` from logits, then:
 *     tmr_decode_step(session, next, logits, info.output_width);
 *   }
 *   tmr_session_destroy(session);
 *   tmr_model_close(model);
 *
 * Conventions:
 *  - Every function that can fail returns a tmr_status and never aborts,
 *    exits or throws; on failure tmr_last_error() says what went wrong, naming
 *    the argument, tensor or file. Outputs are written only on TMR_OK.
 *  - Handles are opaque. A model may be shared by sessions on several threads;
 *    one session must be used by one thread at a time.
 *  - Shapes are in comments as [rows, columns], row-major, f32. "width" is
 *    tmr_model_info.output_width: d_model (hidden states), vocab (logits) or
 *    the number of classes.
 *  - One compiled model per program: the archive defines the model's kernels
 *    and the runtime under fixed names.
 *  - The weights stay memory-mapped. If the file is truncated while a model
 *    has it open, the runtime's SIGBUS handler (installed by the first
 *    tmr_model_open) absorbs the faults, on any thread, and the run fails
 *    with TMR_ERROR_IO; every later run of that model fails too. SIGBUS from
 *    anywhere else goes to the handler the program had installed before. A
 *    program that installs a SIGBUS handler after opening a model must chain
 *    to the one it replaces.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TMR_H
#define TMR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this API (not of the model ABI in tmr_abi.h). */
#define TMR_API_VERSION 1

typedef enum tmr_status {
  TMR_OK = 0,
  TMR_ERROR_INVALID_ARGUMENT = 1, /* a NULL handle or pointer, a count < 1, a buffer too small */
  TMR_ERROR_OUT_OF_RANGE = 2,     /* a token >= vocab, more tokens than max_seq, a bad segment id
                                     or length */
  TMR_ERROR_BAD_STATE = 3,        /* a call out of order (decode_step before prefill) */
  TMR_ERROR_UNSUPPORTED = 4,      /* the call does not apply to this kind of model */
  TMR_ERROR_IO = 5,               /* the weight file cannot be opened, read or mapped, or it
                                     was truncated while the model was reading it */
  TMR_ERROR_BAD_WEIGHTS = 6,      /* not a valid safetensors file, or not this model's weights:
                                     a missing, extra, mis-shaped or mis-typed tensor */
  TMR_ERROR_ABI = 7,              /* the compiled model was made for another runtime */
  TMR_ERROR_OUT_OF_MEMORY = 8,
  TMR_ERROR_MODEL = 9,            /* the model failed while running (a kernel reported an error) */
  TMR_ERROR_INTERNAL = 10
} tmr_status;

/* A short fixed text for `status` ("out of range"); never NULL. */
const char *tmr_status_message(tmr_status status);

/* The detailed message of the last call on this thread that failed, e.g.
 * "w.safetensors: tensor 'h.0.attn.qkv.weight' has shape [64, 32], expected
 * [96, 32]" (one line per problem). Every tmr_* call that can fail clears it
 * first; "" when the last one succeeded. Valid until the next tmr_* call on
 * this thread. */
const char *tmr_last_error(void);

/*--- Models ------------------------------------------------------------------*/

/* Weights opened (mmap), checked against the model and laid out for its kernels. */
typedef struct tmr_model tmr_model;
/* One sequence's state: key/value caches, position, activation arena. */
typedef struct tmr_session tmr_session;
/* The compiled model as tmr_abi.h describes it (generated code); embedders
 * need it only for tmr_model_open_compiled. */
struct tmr_model_desc;

typedef struct tmr_model_params {
  int32_t threads; /* threads for preparing the weights; 0: the compiled default */
} tmr_model_params;

/* The defaults: threads 0. */
tmr_model_params tmr_model_default_params(void);

/* Opens the safetensors file at `weights_path` for the model linked into this
 * program (the one in libNAME.a). Every tensor the model expects must be there
 * with its shape and dtype (`tmc manifest MODEL.tm` lists them) and nothing
 * else, or, for weights the model multiplies in bf16, int8 or q4, as `tmc
 * quantize` stores them (`tmc manifest --quantized`); f16 and bf16 weights are
 * widened to f32; linear weights are packed for the GEMMs. A model compiled with
 * `weights = huggingface(FAMILY)` reads a Hugging Face checkpoint: `weights_path`
 * is then its folder (model.safetensors, or shards listed by
 * model.safetensors.index.json), converted at load (docs/spec-language.md,
 * "Hugging Face checkpoints"). `params` may be NULL (defaults). On
 * success *model owns the mapping until tmr_model_close. Errors: TMR_ERROR_IO,
 * TMR_ERROR_BAD_WEIGHTS (the message names every wrong tensor), TMR_ERROR_ABI,
 * TMR_ERROR_OUT_OF_MEMORY. */
tmr_status tmr_model_open(const char *weights_path, const tmr_model_params *params,
                          tmr_model **model);

/* The same for an explicitly given compiled model (a host that links several
 * executors' descriptions itself, or tests). */
tmr_status tmr_model_open_compiled(const struct tmr_model_desc *compiled, const char *weights_path,
                                   const tmr_model_params *params, tmr_model **model);

/* Releases the model (NULL is ignored). Sessions still alive keep it usable;
 * the memory goes with the last of them. */
void tmr_model_close(tmr_model *model);

typedef enum tmr_model_kind {
  TMR_MODEL_ENCODER = 0,        /* tmr_encode: one pass over a whole input, no caches */
  TMR_MODEL_DECODER = 1,        /* tmr_prefill, then tmr_decode_step per token */
  TMR_MODEL_ENCODER_DECODER = 2 /* tmr_set_source, then as a decoder */
} tmr_model_kind;

typedef enum tmr_output_kind {
  TMR_OUTPUT_HIDDEN = 0,  /* [rows, d_model] final hidden states */
  TMR_OUTPUT_LOGITS = 1,  /* [rows, vocab] next-token logits */
  TMR_OUTPUT_CLASSES = 2  /* [1, classes] class logits of the whole input */
} tmr_output_kind;

typedef struct tmr_model_info {
  const char *name;            /* the spec's model name; lives as long as the program */
  tmr_model_kind kind;
  tmr_output_kind output_kind;
  int64_t vocab;               /* token ids lie in [0, vocab) */
  int64_t max_seq;             /* tokens a sequence (and a source) may hold */
  int64_t d_model;
  int32_t layers;              /* of all stacks together */
  int64_t output_width;        /* floats per output row */
  int64_t output_rows;         /* 0: one output row per input token; else that many (classifier: 1) */
  int64_t segments;            /* segment ids accepted, in [0, segments); 0: none */
  int32_t num_tensors;         /* weight tensors in the file */
  int64_t weight_bytes;        /* f32 weights the kernels read (packed ones included); a tied
                                  head's table is mapped: only rows in use are resident */
  int64_t cache_bytes;         /* key/value caches of one session */
  int64_t arena_bytes;         /* activation arena of one session (at most; rows used are resident) */
  int32_t max_batch;           /* sequences one batched call carries (tmc compile --max-batch);
                                  1: the model runs a batch's sequences one by one */
} tmr_model_info;

tmr_status tmr_model_get_info(const tmr_model *model, tmr_model_info *info);

/*--- Sessions ----------------------------------------------------------------*/

/* A new, empty session: caches for max_seq tokens and the arena are allocated
 * here, once. `threads`: threads its runs use; 0: the compiled default. */
tmr_status tmr_session_create(tmr_model *model, int32_t threads, tmr_session **session);

/* NULL is ignored. */
void tmr_session_destroy(tmr_session *session);

/* Forgets the sequence (cached tokens, source, length) so the session starts a
 * new one; keeps its memory. A rerun after a reset gives the same results. */
tmr_status tmr_session_reset(tmr_session *session);

/* Tokens of the current sequence held in the caches (0 for a new session). */
tmr_status tmr_session_position(const tmr_session *session, int64_t *position);

/* Which rows of a run's output to return. */
typedef enum tmr_rows {
  TMR_ROWS_ALL = 0, /* [num_tokens, width] (a classifier: its output_rows) */
  TMR_ROWS_LAST = 1 /* [1, width]: the last row only (what generation needs); a model with a
                       row per token computes its output layer (the LM head) for that row alone */
} tmr_rows;

/* Encoder models: one forward pass over `tokens` [num_tokens], 1 <= num_tokens
 * <= max_seq, each in [0, vocab). `segments` [num_tokens] in [0, segments), or
 * NULL for all 0. `length`: the valid (unpadded) prefix, 1..num_tokens, or 0
 * for all of them; rows past it are padding. Writes `rows` of the output into
 * `output` [output_floats >= rows * width]. The session keeps no state between
 * encodes. */
tmr_status tmr_encode(tmr_session *session, const int32_t *tokens, int64_t num_tokens,
                      const int32_t *segments, int64_t length, tmr_rows rows, float *output,
                      size_t output_floats);

/* Encoder-decoder models: the source [num_source] (1..max_seq tokens) that the
 * next sequence decodes from, with optional `segments` [num_source] and valid
 * `length` (0: all). It is encoded by the first tmr_prefill; setting it resets
 * the session. */
tmr_status tmr_set_source(tmr_session *session, const int32_t *source, int64_t num_source,
                          const int32_t *segments, int64_t length);

/* Decoder and encoder-decoder models: runs `tokens` [num_tokens] after the
 * position's cached tokens (position + num_tokens <= max_seq), appending their
 * keys and values to the caches. Writes `rows` of the output into `output`
 * [output_floats >= rows * width]: for an LM head, row i holds the logits of
 * the token after tokens[i]. `output` may be NULL with output_floats 0 to
 * discard it. A decoder's tokens have segment id 0. */
tmr_status tmr_prefill(tmr_session *session, const int32_t *tokens, int64_t num_tokens,
                       tmr_rows rows, float *output, size_t output_floats);

/* One decoding step: `token` at the current position (after a prefill), its
 * output row into `output` [output_floats >= width]. Equivalent to
 * tmr_prefill of one token, and to recomputing the whole sequence. */
tmr_status tmr_decode_step(tmr_session *session, int32_t token, float *output,
                           size_t output_floats);

/*--- Batches: many sequences at once ------------------------------------------
 *
 * A batch holds `slots` sequences, each with its own caches and position.
 * One tmr_batch_run advances any of them together: prompts of different
 * lengths, or a decoding step of every active one (num_tokens 1 each). The
 * model's linears then multiply all the rows as one GEMM and attention runs
 * per sequence over its own cache, so a step for 16 sequences streams the
 * weights once. Results equal running each sequence alone in a session.
 * Slots join and leave between runs (tmr_batch_reset_slot): continuous
 * batching. Encoders take a batch of inputs with per-input lengths (they keep
 * no state: any slots). Encoder-decoder models: tmr_batch_set_source gives a
 * slot its source; the slot's first run encodes it, with the sources of the
 * run's other new sequences, and its inputs carry no segments or length
 * (those label the source). */

typedef struct tmr_batch tmr_batch;

/* One sequence's part of a tmr_batch_run. */
typedef struct tmr_sequence_input {
  int32_t slot;            /* in [0, slots); at most once per run */
  const int32_t *tokens;   /* [num_tokens], each in [0, vocab) */
  int64_t num_tokens;      /* >= 1; the slot's position + num_tokens <= max_seq */
  const int32_t *segments; /* [num_tokens] in [0, segments), or NULL for all 0 */
  int64_t length;          /* an encoder's valid (unpadded) prefix, 1..num_tokens; 0: all
                              (an encoder-decoder: NULL segments, length 0) */
} tmr_sequence_input;

/* A batch of `slots` (1..65536) empty sequences. A slot's caches are allocated
 * by its first run (tmr_model_info.cache_bytes each, only rows written
 * resident). `threads`: as tmr_session_create. */
tmr_status tmr_batch_create(tmr_model *model, int32_t slots, int32_t threads, tmr_batch **batch);

/* NULL is ignored. */
void tmr_batch_destroy(tmr_batch *batch);

/* Frees `slot` for a new sequence (its position becomes 0). */
tmr_status tmr_batch_reset_slot(tmr_batch *batch, int32_t slot);

/* Encoder-decoder models: the source [num_source] (1..max_seq tokens) that
 * the next sequence of `slot` decodes from, with optional `segments`
 * [num_source] and valid length (0: all), as tmr_set_source. The slot must
 * be empty (new, or reset); its first tmr_batch_run encodes the source. */
tmr_status tmr_batch_set_source(tmr_batch *batch, int32_t slot, const int32_t *source,
                                int64_t num_source, const int32_t *segments, int64_t length);

/* Tokens `slot` holds. */
tmr_status tmr_batch_position(const tmr_batch *batch, int32_t slot, int64_t *position);

/* Runs `inputs` [count] together, each after the tokens its slot holds.
 * Writes into `output` [output_floats] each input's rows one after the other:
 * TMR_ROWS_ALL, its num_tokens rows (a classifier: its output_rows);
 * TMR_ROWS_LAST, its last row alone (the LM head runs for those rows only).
 * `output` may be NULL with output_floats 0 to discard it. Errors name the
 * input: TMR_ERROR_OUT_OF_RANGE (a slot, token, segment id, length or a
 * position past max_seq), TMR_ERROR_INVALID_ARGUMENT (a slot twice, a buffer
 * too small). On failure no slot's position moves. */
tmr_status tmr_batch_run(tmr_batch *batch, const tmr_sequence_input *inputs, int32_t count,
                         tmr_rows rows, float *output, size_t output_floats);

#ifdef __cplusplus
}
#endif

#endif /* TMR_H */
