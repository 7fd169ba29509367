//===- Passes.td - From tm to the kernel plan -------------*- tablegen -*-===//

#ifndef TMK_PASSES_TD
#define TMK_PASSES_TD

include "mlir/Pass/PassBase.td"

def TMLowerToKernels : Pass<"tm-lower-to-kernels", "::mlir::ModuleOp"> {
  let summary = "Lower every fused tm op to a call of its own tmk kernel";
  let description = [{
    Each compute op becomes a `tmk.kernel` (kind + static attributes) and a
    `tmk.call` of it with the op's operands and location; `tm.weight`,
    `tm.cache_append` and `tm.cache_read` become their tmk forms. Kernels
    are not shared yet (`tmk-dedup` does that). An op with no kernel is an
    error at its spec location.

    ```mlir
    %y = tm.linear %x, %w {activation = "relu"} : (...) -> tensor<?x128xf32>
    // becomes
    tmk.kernel @linear linear {activation = "relu", in_width = 64 : i64, width = 128 : i64}
    %y = tmk.call @linear(%x, %w) {from = "tm.linear"} : (...) -> tensor<?x128xf32>
    ```
  }];
  let dependentDialects = ["::tmc::tmk::TMKDialect"];
}

def TMKTiedTablePrecision : Pass<"tmk-tied-table-precision", "::mlir::ModuleOp"> {
  let summary = "Look a tied token table up in the precision its head packs it in";
  let description = [{
    An embedding whose table linears multiply in one reduced precision
    (bf16, int8 or q4: a tied LM head's) and which no other kernel reads
    gets that `precision`: its kernel reads the head's packed copy and
    dequantizes the rows it looks up, so that no f32 copy of the table is
    kept beside the packed one or stored in a quantized weights file.

    ```mlir
    %x = tmk.call @embed(%tokens, %offset, %table) ...   // @embed: f32 lookup
    %y = tmk.call @head(%h, %table) ...                  // @head: precision = "int8"
    // @embed gets precision = "int8"
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark at every lookup given its head's precision">
  ];
}

def TMKFuseRopeEpilogue : Pass<"tmk-fuse-rope-epilogue", "::mlir::ModuleOp"> {
  let summary = "Fold rope calls into the linear whose outputs they turn";
  let description = [{
    A rope call reading a linear's result, or a leading part of it (q, or q
    and k of a fused q/k/v projection), read by nothing else, is folded into
    the linear: its kernel gets `rope_columns` (the columns turned, whole
    heads from the first) and `head_dim`, and the call reads the ropes'
    rope_table rows as its last input. The GEMM turns those outputs as it
    stores them; the rope calls and their pass over q and k go. Every
    rotated part must come before the parts that are not and share one
    table.

    ```mlir
    %t = tmk.call @rope_table(%offset) ...
    %y = tmk.call @linear(%x, %w) ... -> tensor<?x384xf32>
    %q, %k, %v = tmk.split %y ...
    %qr = tmk.call @rope(%q, %t) ...
    %kr = tmk.call @rope(%k, %t) ...
    // becomes
    %y = tmk.call @linear_1(%x, %w, %t) ...   // @linear_1: rope_columns = 256, head_dim = 64
    %q, %k, %v = tmk.split %y ...
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark at every linear given its ropes, and at every one declined">
  ];
}

def TMKDedup : Pass<"tmk-dedup", "::mlir::ModuleOp"> {
  let summary = "Merge kernels with identical kind and attributes";
  let description = [{
    Kernels whose static attributes agree compile to the same code: every
    call is pointed at the first of them and the others are erased, so the
    layers of a stack (and @encode and @forward) share one kernel set.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark at every kernel with how many calls share it">
  ];
}

def TMKDecodeVariants : Pass<"tmk-decode-variants", "::mlir::ModuleOp"> {
  let summary = "Mark the kernels a decoding step runs with one query row";
  let description = [{
    A function that appends to a key/value cache is run again for every
    generated token with one row (T = 1) against the P + T cached keys: the
    kernels it calls get `decode`, so Halide compiles a one-row variant of
    each next to the tiled prompt variant, and the attention calls reading a
    cache get `kv_cache`. Kernels only an encoder runs keep the prompt
    variant alone.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark at every kernel given a decode variant">
  ];
}

def TMKWindowCaches : Pass<"tmk-window-caches", "::mlir::ModuleOp"> {
  let summary = "Bound the caches of windowed attention by their window";
  let description = [{
    A key or value cache that only sliding-window attention reads (a
    decoder's `sliding_window` or `dilated` mask with no global or random
    term and no padding) is read at most `window - 1` positions before a
    run's first token. Such a cache gets `keep = window - 1` and a capacity
    of keep + C rows instead of max_seq: it holds the kept rows and one
    run's, and moves the kept ones to its front when the next run would not
    fit; the attention kernels reading it get `window_keys` (their keys'
    rows start at the cache's first position). The module gets
    `tmk.run_chunk = C`, the most tokens one run of a
    sequence may carry; the executable feeds longer runs in consecutive
    chunks. C is max(the largest window, min(256, max_seq / 4)): long
    prompts still run as GEMMs of hundreds of rows. A module where a chunk
    would change what a run computes (pooling, a Linformer projection, a
    padded self-attention) keeps its caches whole, as does a cache that
    keep + C would not make smaller.

    ```mlir
    %k = tmk.cache_append %x at %offset {capacity = 4096 : i64, name = "layers.0.k"}
    // read only by attention with #tm.mask<causal = true, decoder = true, window = 256>:
    %k = tmk.cache_append %x at %offset {capacity = 511 : i64, keep = 255 : i64, name = "layers.0.k"}
    ```
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark at every cache bounded by a window">
  ];
}

def TMKPlanBuffers : Pass<"tmk-plan-buffers", "::mlir::func::FuncOp"> {
  let summary = "Assign arena offsets from live ranges, in place where legal";
  let description = [{
    Every call result but the returned one lives in the activation arena
    from its call to its last use. Offsets are in units of T floats (a
    value of width W takes W units), so one plan holds for every sequence
    length. A call whose kernel may overwrite a dying input (elementwise
    kernels, norms, a GEMM's residual) writes its result in that input's
    place (`in_place`); the rest go first fit. The function gets
    `tmk.arena_width` (the peak) and `tmk.arena_width_no_reuse` (the peak
    without in-place results), both in units of T floats.
  }];
  let options = [
    Option<"explain", "explain", "bool", /*default=*/"false",
           "Emit a remark with the arena's peak, with and without in-place reuse">
  ];
}

#endif // TMK_PASSES_TD
