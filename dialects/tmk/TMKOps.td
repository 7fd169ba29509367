//===- TMKOps.td - Operations of the tmk dialect ----------*- tablegen -*-===//

#ifndef TMK_OPS_TD
#define TMK_OPS_TD

include "dialects/tmk/TMKDialect.td"
include "dialects/tm/TMAttrs.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TMK_KindEmbed : I32EnumAttrCase<"embed", 0>;
def TMK_KindPositions : I32EnumAttrCase<"positions", 1>;
def TMK_KindSegments : I32EnumAttrCase<"segments", 2>;
def TMK_KindLinear : I32EnumAttrCase<"linear", 3>;
def TMK_KindAttention : I32EnumAttrCase<"attention", 4>;
def TMK_KindAdd : I32EnumAttrCase<"add", 5>;
def TMK_KindActivation : I32EnumAttrCase<"activation", 6>;
def TMK_KindGated : I32EnumAttrCase<"gated_activation", 7>;
def TMK_KindNorm : I32EnumAttrCase<"norm", 8>;
def TMK_KindAddNorm : I32EnumAttrCase<"add_norm", 9>;
def TMK_KindRope : I32EnumAttrCase<"rope", 10>;
def TMK_KindPool : I32EnumAttrCase<"pool", 11>;
def TMK_KindSeqProject : I32EnumAttrCase<"seq_project", 12>;
def TMK_KindRopeTable : I32EnumAttrCase<"rope_table", 13>;

def TMK_KernelKindAttr : I32EnumAttr<"KernelKind", "what a kernel computes", [
    TMK_KindEmbed, TMK_KindPositions, TMK_KindSegments, TMK_KindLinear,
    TMK_KindAttention, TMK_KindAdd, TMK_KindActivation, TMK_KindGated,
    TMK_KindNorm, TMK_KindAddNorm, TMK_KindRope, TMK_KindPool, TMK_KindSeqProject,
    TMK_KindRopeTable]> {
  let cppNamespace = "::tmc::tmk";
}

def TMK_KernelOp : TMK_Op<"kernel", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "A kernel: one schedulable Halide pipeline, its kind and static attributes";
  let description = [{
    What Halide compiles: the kind and every constant the algorithm bakes
    in (widths, heads, epsilon, mask, epilogue). Every row count stays
    symbolic, so one kernel serves prompts of any length and decoding
    steps. Which attributes a kind takes is fixed (see the verifier):
    `width` always (output features); linear `in_width`, `activation`,
    the units `bias` / `residual` (epilogue inputs) and `precision` ("f32"
    when absent, "bf16", "int8" or "q4": kernels of different precision
    are different code, never shared); embed `precision` too (a tied
    table read from its head's packed copy: tmk-tied-table-precision);
    attention `heads`,
    `kv_heads`, `head_dim`, `scale`, `mask`, `alibi`, `kv_precision` (the
    storage of the key/value caches it reads, "f16" or "bf16"; f32 when
    absent: it widens each element as it loads it), `window_keys` (it reads
    keys from caches bounded by its window, tmk-window-caches: their rows
    start at a position of their own, not 0); norms `variant`,
    `eps`, `bias`; a linear's `rope_columns` and `head_dim` (its first
    rope_columns outputs turned by rotary positions as it stores them,
    reading a rope_table call's rows after its other inputs:
    tmk-fuse-rope-epilogue); rope_table `head_dim` and `theta` (width = head_dim:
    each token row's cos(p w_i), then its sin(p w_i), i < head_dim / 2, at
    position p = offset + row), rope `heads` and `head_dim` (it reads the
    rows of a rope_table call: tm-lower-to-kernels makes one per function,
    offset, head_dim and theta, which every rope of the model shares); and
    so on. `decode` marks a kernel a decoding step calls
    with one query row (`tmk-decode-variants`): it is compiled with a
    one-row variant next to the tiled one.

    ```mlir
    tmk.kernel @linear linear {width = 128 : i64, in_width = 64 : i64, activation = "gelu", bias}
    tmk.kernel @attention attention {width = 64 : i64, heads = 4 : i64, kv_heads = 4 : i64,
        head_dim = 16 : i64, scale = 2.5e-01 : f64, mask = #tm.mask<causal = true>}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TMK_KernelKindAttr:$kind, I64Attr:$width,
                       OptionalAttr<I64Attr>:$in_width, OptionalAttr<I64Attr>:$table_rows,
                       OptionalAttr<I64Attr>:$position_rows, OptionalAttr<I64Attr>:$heads,
                       OptionalAttr<I64Attr>:$kv_heads, OptionalAttr<I64Attr>:$head_dim,
                       OptionalAttr<F64Attr>:$scale, OptionalAttr<F64Attr>:$eps,
                       OptionalAttr<F64Attr>:$theta, OptionalAttr<StrAttr>:$position,
                       OptionalAttr<StrAttr>:$activation, OptionalAttr<StrAttr>:$variant,
                       UnitAttr:$bias, UnitAttr:$residual, UnitAttr:$length,
                       OptionalAttr<TM_MaskAttr>:$mask, UnitAttr:$alibi, UnitAttr:$decode,
                       OptionalAttr<StrAttr>:$precision, OptionalAttr<StrAttr>:$kv_precision,
                       UnitAttr:$window_keys, OptionalAttr<I64Attr>:$rope_columns);
  let assemblyFormat = "$sym_name $kind attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Operands a call passes, in order (the output is the call's result).
    unsigned getNumInputs();
    /// True when the kernel's result at row t, feature c reads input `index`
    /// only at (t, c), or reads its whole row t before writing any of it: a
    /// call may then write its result over that input (tmk-plan-buffers).
    bool mayOverwriteInput(unsigned index);
    /// The static attributes alone (no symbol name): equal for kernels that
    /// compile to the same code (tmk-dedup).
    ::mlir::DictionaryAttr getSignatureAttrs();
  }];
}

def TMK_WeightOp : TMK_Op<"weight", [Pure]> {
  let summary = "A weight tensor of the model's manifest, by name";
  let description = [{
    ```mlir
    %w = tmk.weight "decoder.layers.0.ffn.up.weight" : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TMK_CallOp : TMK_Op<"call", [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Runs a kernel over its arguments into a new buffer";
  let description = [{
    Operands bind the kernel's inputs in its signature's order: run inputs
    (function arguments: tokens, offset, length, segments), weights, earlier
    results (activation buffers), cache contents. `from` names the `tm` op it
    came from; the location is that op's (spec line and value name), so an
    error in a kernel-level pass still points at the spec. `arena` (set by
    `tmk-plan-buffers`) is the result's offset in the activation arena, in
    units of T floats; the function's returned value has none (it is the
    output buffer). `in_place` says the result overwrites a dying input.

    ```mlir
    %y = tmk.call @linear(%x, %w, %b) {from = "tm.linear", arena = 64 : i64}
        : (tensor<?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<AnyType>:$args, StrAttr:$from,
                       OptionalAttr<I64Attr>:$arena, UnitAttr:$in_place);
  let results = (outs 2DTensorOf<[F32]>:$result);
  let assemblyFormat = "$kernel `(` $args `)` attr-dict `:` functional-type($args, $result)";
  let extraClassDeclaration = [{
    /// The kernel this calls, or null.
    KernelOp getKernelOp();
  }];
}

def TMK_CacheAppendOp : TMK_Op<"cache_append", [MemoryEffects<[MemRead, MemWrite]>,
                                                 AllTypesMatch<["input", "result"]>]> {
  let summary = "Copies rows after those a cache holds; yields every cached row";
  let description = [{
    The copy a decoder's key and value caches need: `offset` rows are
    already there (a decoding step's keys are the cache's P + T rows).
    `precision` ("f16" or "bf16"; f32 when absent) is the cache's storage:
    rows are rounded to it as they are copied in (tm.cache_append).
    `keep` (tmk-window-caches) bounds it by its readers' window: the
    attention that reads it sees at most `keep` positions before a run's
    first token, so it holds those and the run's rows in `capacity` rows,
    moving the kept ones to its front when the next run would not fit.

    ```mlir
    %keys = tmk.cache_append %k at %offset {name = "decoder.layers.0.self_attn.k", capacity = 64 : i64}
        : (tensor<?x64xf32>, i32) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins 2DTensorOf<[F32]>:$input, I32:$offset, StrAttr:$name, I64Attr:$capacity,
                       OptionalAttr<StrAttr>:$precision, OptionalAttr<I64Attr>:$keep);
  let results = (outs 2DTensorOf<[F32]>:$result);
  let assemblyFormat = "$input `at` $offset attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def TMK_CacheReadOp : TMK_Op<"cache_read", [MemoryEffects<[MemRead]>]> {
  let summary = "Every row a cache holds (an encoder-decoder's source keys or values)";
  let description = [{
    ```mlir
    %keys = tmk.cache_read {name = "decoder.layers.0.cross_attn.k", capacity = 64 : i64} : tensor<?x32xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, I64Attr:$capacity, OptionalAttr<StrAttr>:$precision);
  let results = (outs 2DTensorOf<[F32]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TMK_ConcatOp : TMK_Op<"concat", [Pure]> {
  let summary = "Weights stacked along dimension 0, built once when the weights load";
  let description = [{
    The weight of a fused projection (`tm.concat`): the executable stacks
    the named tensors into its prepared weights before the first run.

    ```mlir
    %w = tmk.concat %wq, %wk : (tensor<64x64xf32>, tensor<16x64xf32>) -> tensor<80x64xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyStaticShapeTensor>:$inputs);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $result)";
  let hasVerifier = 1;
}

def TMK_SplitOp : TMK_Op<"split", [Pure]> {
  let summary = "Column ranges of a call's result, read in place with its row stride";
  let description = [{
    No kernel and no arena space of its own: each part is a view of the
    input's buffer (`tm.split`), which therefore stays live until the last
    use of any part (`tmk-plan-buffers`). The location is a fused one with
    one entry per part, so each part keeps the name of the value it stands
    for.

    ```mlir
    %q, %k = tmk.split %qk : tensor<?x80xf32> -> tensor<?x64xf32>, tensor<?x16xf32>
    ```
  }];
  let arguments = (ins 2DTensorOf<[F32]>:$input);
  let results = (outs Variadic<2DTensorOf<[F32]>>:$results);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
}

#endif // TMK_OPS_TD
