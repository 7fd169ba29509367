/*===- tmr_abi.h - The contract between generated executors and the runtime -===*
 *
 * A schema, versioned: the compiler's generated executor defines one
 * `tmr_model_desc` and the runtime (tmr.h) drives it. Change a field only
 * together with TMR_ABI_VERSION; the runtime refuses a mismatched model.
 *
 *===----------------------------------------------------------------------===*/
#ifndef TMR_ABI_H
#define TMR_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TMR_ABI_VERSION 10
#define TMR_MAX_RANK 4

/* Kernels may use aligned vector loads: every weight and the cache must start
 * on this boundary (the executor checks, and reports a misaligned one). The
 * tokens, segment ids and output may be anywhere. */
#define TMR_BUFFER_ALIGNMENT 128

/* A key/value cache that only sliding-window attention reads holds the
 * window's rows and one run's, not max_seq (docs/architecture.md, "Caches
 * bounded by a window"); its part of the cache memory starts with a header
 * of this many bytes (the position its first row holds). run() feeds a
 * longer run to such a model in chunks itself. */
#define TMR_RING_HEADER_BYTES 64

/* I8 and U8 hold pre-quantized weights (`tmc quantize`), never a manifest's dtype. */
typedef enum tmr_dtype { TMR_F32 = 0, TMR_F16 = 1, TMR_BF16 = 2, TMR_I8 = 3, TMR_U8 = 4 } tmr_dtype;

/* How a file may also hold a weight: pre-quantized as the kernels that read
 * it multiply it (docs/spec-language.md, "Quantized weight files"). */
typedef enum tmr_quantized {
  TMR_QUANT_NONE = 0, /* only as its manifest dtype */
  TMR_QUANT_INT8 = 1, /* or I8 values [N, K] and "NAME.scale" F32 [N] */
  TMR_QUANT_Q4 = 2,   /* or U8 nibbles [N, 16 ceil(K/32)] and "NAME.scale" F16 [N, ceil(K/32)] */
  TMR_QUANT_BF16 = 3  /* or BF16 [N, K] (widened at load, exactly, then packed) */
} tmr_quantized;

/* One expected weight tensor, as `tmc manifest` lists it. */
typedef struct tmr_tensor_desc {
  const char *name;
  int32_t rank;
  int64_t shape[TMR_MAX_RANK];
  tmr_dtype dtype;
  tmr_quantized quantized;
} tmr_tensor_desc;

/* One sequence of a batched run (tmr_run_args.sequences): its rows are
 * consecutive in the run's tokens, segments and output, in the order given. */
typedef struct tmr_sequence_run {
  int64_t num_tokens; /* >= 1, offset + num_tokens <= max_seq */
  int64_t offset;     /* its tokens in its cache (0: a new sequence) */
  int64_t length;     /* valid (unpadded) length of the first stack's input, as
                         tmr_run_args.length: its tokens (1..num_tokens), or an
                         encoder-decoder's source (1..num_source_tokens); 0: all */
  void *cache;        /* [cache_bytes] its own caches, as tmr_run_args.cache */
  /* Encoder-decoders: the sequence's source, encoded (with the sources of the
   * run's other new sequences) when offset == 0 and read through the
   * cross-attention caches after. */
  const int32_t *source_tokens;   /* [num_source_tokens], read when offset == 0 */
  const int32_t *source_segments; /* [num_source_tokens] segment ids, or NULL for all 0 */
  int64_t num_source_tokens;      /* 1..max_seq, on every run of the sequence */
} tmr_sequence_run;

/* What one forward pass reads and writes. A decoder's sequence is fed in
 * runs: a prompt (offset 0), then one token per decoding step, each run
 * appending its keys and values to the caches after `offset` cached rows. */
typedef struct tmr_run_args {
  const void *const *weights; /* in manifest order, each matching its desc */
  const void *prepared;       /* what prepare() returned for these weights (NULL without one) */
  const int32_t *tokens;      /* [num_tokens], each in [0, vocab) */
  int64_t num_tokens;         /* >= 1, offset + num_tokens <= max_seq; with sequences, the
                                 sum of theirs (the arena must hold that many rows) */
  const int32_t *segments;    /* [num_tokens] segment ids in [0, segments), or NULL for all 0 */
  int64_t offset;             /* tokens of this sequence in the caches (0: a new sequence) */
  int64_t length;             /* valid (unpadded) length of the first stack's input: the
                                 tokens, or an encoder-decoder's source; 0: all of it */
  const int32_t *source_tokens; /* encoder-decoder: the source, read when offset == 0 */
  int64_t num_source_tokens;  /* encoder-decoder: the source's length, on every run */
  void *cache;                /* [cache_bytes] zeroed, caller-owned, kept across a sequence's
                                 runs: f32, f16 or bf16 rows, as each cache stores them (a
                                 cache bounded by a window after its header) */
  float *output;              /* [output rows, output_width], caller-owned; rows = num_tokens,
                                 or output_rows (per sequence) when that is non-zero */
  int32_t num_threads;        /* 0: the compiled default (all cores unless set) */
  float *arena;               /* [arena_floats] aligned scratch kept by the caller across runs,
                                 or NULL: the run allocates (and frees) its own */
  int32_t last_row_only;      /* 1: a model with one output row per token (output_rows 0)
                                 writes the last token's row alone ([1, output_width]) and runs
                                 its output kernel (the LM head) for that row only: what
                                 generation reads of a prompt. 0: every row. With sequences,
                                 each one's last row: [num_sequences, output_width]. */
  int32_t num_sequences;      /* 0: one sequence, as offset, length and cache say. 1 to the
                                 model's max_batch: a batch; tokens (and segments) hold the
                                 sequences' tokens one after the other (num_tokens in all)
                                 and offset, length and cache are unused. Row-wise kernels
                                 (linears, norms) run once over all the rows; attention,
                                 positions and caches per sequence. */
  const tmr_sequence_run *sequences; /* [num_sequences] */
} tmr_run_args;

/* Returns 0 on success, else writes a message into err (err_len bytes). */
typedef int (*tmr_run_fn)(const tmr_run_args *args, char *err, size_t err_len);

/* Called by prepare() once it has read weight `index` for the last time. With
 * still_read 0, run() never reads the weight itself, only its packed copy: the
 * runtime may free it. With still_read 1, run() reads parts of it (a tied
 * head's embedding table, looked up row by row): the runtime may drop only
 * memory it can read back on demand (pages of the mapped file). */
typedef void (*tmr_weight_done_fn)(void *context, int32_t index, int32_t still_read);

/* Once per set of weights, before any run: lays the weights out as the
 * kernels read them fastest (linear weights packed into column panels).
 * `scales` (may be NULL: none) has one entry per weight: NULL for a weight in
 * its manifest dtype, else the scales of a pre-quantized weight, whose
 * weights[] entry then holds its I8 or U8 values (tmr_quantized).
 * `done` (may be NULL) learns which weights are no longer needed, one by one,
 * so that the raw and packed copies of all weights are never resident at once.
 * Returns 0 and *prepared (freed with release), or non-zero with a message. */
typedef int (*tmr_prepare_fn)(const void *const *weights, const void *const *scales,
                              int32_t num_threads, tmr_weight_done_fn done, void *done_context,
                              void **prepared, char *err, size_t err_len);
typedef void (*tmr_release_fn)(void *prepared);

typedef struct tmr_model_desc {
  uint32_t abi_version;       /* TMR_ABI_VERSION at compile time */
  const char *name;           /* the spec's model name */
  const char *output_kind;    /* "hidden", "logits" (one row of vocab logits per token), "classes" */
  int64_t vocab;
  int64_t max_seq;
  int64_t output_width;
  int64_t output_rows;        /* 0: one output row per token; else fixed (a classifier: 1) */
  int64_t cache_bytes;        /* 0 for a model without key/value caches (an encoder) */
  int64_t segments;           /* segment (token type) ids the model accepts; 0: none */
  int32_t encoder_decoder;    /* 1: runs need source tokens (args.source_tokens) */
  int32_t num_tensors;
  const tmr_tensor_desc *tensors;
  tmr_run_fn run;
  tmr_prepare_fn prepare;     /* NULL: nothing to prepare */
  tmr_release_fn release;
  int64_t d_model;            /* width of the hidden states */
  int32_t layers;             /* layers of all stacks together */
  int64_t arena_floats;       /* scratch the largest run needs (max_seq tokens): run_args.arena */
  int64_t prepared_floats;    /* size of what prepare() returns (packed weights) */
  const char *weight_scheme;  /* NULL or "": the weights carry tmc's canonical names; else a
                                 Hugging Face family ("gpt2", "bert", "llama"): the weights are
                                 a checkpoint as save_pretrained writes it (a folder, sharded
                                 or not), read under canonical names at load */
  int32_t max_batch;          /* sequences one run may carry (num_sequences); 0 or 1: one */
  int64_t arena_row_floats;   /* arena floats per row of a run (arena_floats for max_seq rows):
                                 a batched run of R rows in all needs R times this */
} tmr_model_desc;

/* The rows of a run's output: the model's fixed count for each sequence, or
 * one per token, or with last_row_only each sequence's last token's alone. */
static inline int64_t tmr_output_rows(const tmr_model_desc *model, const tmr_run_args *args) {
  const int64_t sequences = args->num_sequences > 1 ? args->num_sequences : 1;
  if (model->output_rows) /* a classifier's rows, for each sequence */
    return model->output_rows * sequences;
  return args->last_row_only ? sequences : args->num_tokens;
}

/* Halide's errors (runtime/halide_error.cpp defines halide_error, replacing
 * the default that aborts): the first message since the last clear, "" if
 * none, of the calling thread. */
const char *tmr_halide_error_message(void);
void tmr_halide_error_clear(void);

/* Defined by the generated executor (one per program). */
const tmr_model_desc *tmr_compiled_model(void);

/* Defined by the generated executor too: the instruction set its kernels run
 * with ("avx512", "avx2", "neon"; a multi-ISA executable's pick, made at the
 * first call of either function). Weak, so that a hand-written model need not
 * define it: then its address is null. */
const char *tmr_compiled_isa(void) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#endif /* TMR_ABI_H */
