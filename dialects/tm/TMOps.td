//===- TMOps.td - Operations of the tm dialect ------------*- tablegen -*-===//

#ifndef TM_OPS_TD
#define TM_OPS_TD

include "dialects/tm/TMAttrs.td"
include "dialects/tm/TMInterfaces.td"

// Ops whose result shape follows from their operands (see TMInterfaces.td).
def TM_InfersShape : DeclareOpInterfaceMethods<TM_ShapeInferenceOpInterface>;
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TM_WeightOp : TM_Op<"weight", [Pure]> {
  let summary = "A named weight tensor, bound from the weight file at run time";
  let description = [{
    Names one tensor of the model's manifest. The executable checks the weight
    file against these names and shapes before it runs anything.

    ```mlir
    %w = tm.weight "encoder.layers.0.self_attn.q.weight" : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs TM_Weight:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TM_ConcatOp : TM_Op<"concat", [Pure]> {
  let summary = "Weights stacked along their first dimension, once, when they load";
  let description = [{
    Stacks weight tensors (each `tm.weight` or another `tm.concat`) along
    dimension 0; every other dimension must agree. In PyTorch's [out, in]
    layout that is the weight of one linear layer computing all their
    outputs side by side, which `--tm-fuse-projections` forms for the q, k
    and v projections of an attention (and a gated FFN's gate and up). The
    executable builds it once while it prepares the weights, never per run.

    ```mlir
    %w = tm.concat %wq, %wk, %wv
        : (tensor<64x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<96x64xf32>
    ```
  }];
  let arguments = (ins Variadic<TM_Weight>:$inputs);
  let results = (outs TM_Weight:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $result)";
  let hasVerifier = 1;
}

def TM_SplitOp : TM_Op<"split", [Pure]> {
  let summary = "Column ranges of one activation, side by side (a view, no copy)";
  let description = [{
    Result i is the columns [sum of the widths before it, + its width) of
    every row of `input`; the widths come from the result types and add up
    to the input's. Kernels read the parts in place, with the input's row
    stride, so a split costs no copy: it is how the outputs of a fused
    projection (`--tm-fuse-projections`) reach the ops that read q, k and v.

    ```mlir
    %q, %k, %v = tm.split %qkv : tensor<?x96xf32> -> tensor<?x64xf32>, tensor<?x16xf32>, tensor<?x16xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input);
  let results = (outs Variadic<TM_Activations>:$results);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($results)";
  let hasVerifier = 1;
}

def TM_EmbedOp : TM_Op<"embed", [TM_InfersShape, Pure]> {
  let summary = "Token embedding lookup, optionally scaled and with positions added";
  let description = [{
    `result[t, :] = table[tokens[t], :] * scale (+ position[offset + t, :])`,
    where `offset` is the number of tokens before this call (0 for a prompt;
    the cache length when decoding).
    As built, `position` is "none"; `--tm-fuse-embedding-positions` folds a
    following `tm.add_positions` into it ("sinusoidal", or "learned" with the
    positions table as third operand).

    ```mlir
    %x = tm.embed %tokens at %offset, %table {position = "none", scale = 1.0 : f64}
        : (tensor<?xi32>, i32, tensor<100x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Tokens:$tokens, I32:$offset, TM_Weight:$table,
                       Optional<TM_Weight>:$positions, F64Attr:$scale,
                       StrAttr:$position);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $tokens `at` $offset `,` $table (`,` $positions^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_AddSegmentsOp : TM_Op<"add_segments", [TM_InfersShape, Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Adds each token's segment (token type) embedding (BERT)";
  let description = [{
    `result[t, :] = input[t, :] + table[segments[t], :]`; the executable's
    segment ids default to 0.

    ```mlir
    %y = tm.add_segments %x, %segments, %table
        : (tensor<?x64xf32>, tensor<?xi32>, tensor<2x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, TM_Tokens:$segments, TM_Weight:$table);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $input `,` $segments `,` $table attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_AddPositionsOp : TM_Op<"add_positions", [TM_InfersShape, Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Adds absolute position encodings to a sequence";
  let description = [{
    `kind = "sinusoidal"`: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(same).
    `kind = "learned"`: row p of the positions table (third operand).

    ```mlir
    %y = tm.add_positions %x at %offset {kind = "sinusoidal"} : (tensor<?x64xf32>, i32) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, I32:$offset, Optional<TM_Weight>:$table,
                       StrAttr:$kind);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $input `at` $offset (`,` $table^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_LinearOp : TM_Op<"linear", [TM_InfersShape, Pure, AttrSizedOperandSegments]> {
  let summary = "y = act(x * W^T + b) (+ residual), PyTorch nn.Linear layout";
  let description = [{
    `weight` is [out, in] as in PyTorch; `bias` is optional. `activation` is
    "none" as built; `--tm-fuse-linear-activation` folds a following
    `tm.activation` into it. `residual`, added after the activation, is
    absent as built; `--tm-fuse-linear-residual` folds a following residual
    `tm.add` into it, so the sum is formed as the GEMM stores its tile.
    `precision` is how the GEMM multiplies: "f32" (also when absent),
    "bf16" (weights packed as bf16 at load, activations rounded to bf16,
    products summed in f32), "int8" (weights quantized per output
    channel at load, each token row of the activations per row inside the
    GEMM, products summed exactly in int32, then scaled back to f32) or
    "q4" (ggml's Q4_0: weights quantized at load in blocks of 32 along K to
    4 bits with an f16 scale per block, activations per row as for int8,
    each block's products summed exactly in int32, then scaled and summed
    in f32); see docs/spec-language.md. Every pass that rebuilds the op
    keeps it.

    ```mlir
    %y = tm.linear %x, %w, %b {activation = "none"}
        : (tensor<?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %z = tm.linear %h, %w2 residual %r {activation = "none"}
        : (tensor<?x128xf32>, tensor<64x128xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    %v = tm.linear %x, %w {activation = "none", precision = "bf16"}
        : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    %u = tm.linear %x, %w {activation = "none", precision = "int8"}
        : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    %t = tm.linear %x, %w {activation = "none", precision = "q4"}
        : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, 2DTensorOf<[F32]>:$weight,
                       Optional<1DTensorOf<[F32]>>:$bias, Optional<TM_Activations>:$residual,
                       StrAttr:$activation, OptionalAttr<StrAttr>:$precision);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? (`residual` $residual^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// "f32", "bf16", "int8" or "q4"; an absent attribute is "f32", so
    /// that passes compare and copy the effective value.
    ::llvm::StringRef getEffectivePrecision() { return getPrecision().value_or("f32"); }
  }];
}

def TM_AttentionOp : TM_Op<"attention", [TM_InfersShape, Pure]> {
  let summary = "Multi-head scaled dot-product attention (softmax(q k^T * scale) v)";
  let description = [{
    Inputs are the projected queries [tokens, heads * head_dim] and keys and
    values [tokens, kv_heads * head_dim]; query head h reads kv head
    h / (heads / kv_heads). The result concatenates the heads in order.
    There may be fewer queries than keys (decoding against a cache): query i
    then sits at position Tk - Tq + i. `mask` says which keys a query sees;
    `alibi` adds -slope_h * |i - j| (decoder: i - j) to the scores, with
    slope_h = 2^(-8(h+1)/heads). A `padding` mask hides keys at or past
    `length`, the sequence's valid length, given exactly when it is set.

    ```mlir
    %a = tm.attention %q, %k, %v {heads = 4 : i64, kv_heads = 4 : i64, head_dim = 16 : i64, mask = #tm.mask<causal = true>, scale = 0.25 : f64}
        : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$query, TM_Activations:$key,
                       TM_Activations:$value, Optional<I32>:$length, I64Attr:$heads,
                       I64Attr:$kv_heads, I64Attr:$head_dim, F64Attr:$scale,
                       TM_MaskAttr:$mask, UnitAttr:$alibi);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`length` $length^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_AddOp : TM_Op<"add", [TM_InfersShape, Pure, Commutative, SameOperandsAndResultType]> {
  let summary = "Elementwise sum (the residual connection)";
  let description = [{
    ```mlir
    %s = tm.add %x, %y : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$lhs, TM_Activations:$rhs);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def TM_ActivationOp : TM_Op<"activation", [TM_InfersShape, Pure, SameOperandsAndResultType]> {
  let summary = "Elementwise activation function";
  let description = [{
    `kind` is one of "relu", "gelu" (erf form), "gelu_tanh", "silu", "tanh"
    (BERT's pooler).

    ```mlir
    %y = tm.activation %x {kind = "relu"} : tensor<?x128xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, StrAttr:$kind);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TM_NormOp : TM_Op<"norm", [TM_InfersShape, Pure]> {
  let summary = "Layer or RMS normalization over the last dimension";
  let description = [{
    `kind = "layernorm"`: `(x - mean) / sqrt(var + eps) * weight + bias`,
    biased variance (PyTorch). `kind = "rmsnorm"`: `x / sqrt(mean(x^2) + eps)
    * weight`, no bias.

    ```mlir
    %y = tm.norm %x, %w, %b {eps = 1.0e-05 : f64, kind = "layernorm"}
        : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, 1DTensorOf<[F32]>:$weight,
                       Optional<1DTensorOf<[F32]>>:$bias, StrAttr:$kind, F64Attr:$eps);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_AddNormOp : TM_Op<"add_norm", [TM_InfersShape, Pure]> {
  let summary = "Fused residual add and normalization: norm(x + residual)";
  let description = [{
    Formed by `--tm-fuse-residual-norm` so that the sum never round-trips
    through memory.

    ```mlir
    %y = tm.add_norm %x, %r, %w, %b {eps = 1.0e-05 : f64, kind = "layernorm"}
        : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, TM_Activations:$residual,
                       1DTensorOf<[F32]>:$weight, Optional<1DTensorOf<[F32]>>:$bias,
                       StrAttr:$kind, F64Attr:$eps);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $input `,` $residual `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_RopeOp : TM_Op<"rope", [TM_InfersShape, Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Rotary position embedding (rotate-half convention)";
  let description = [{
    In each head, dimension i pairs with i + head_dim/2 and both rotate by
    angle = (offset + t) * theta^(-2i/head_dim) (Hugging Face's Llama).

    ```mlir
    %qr = tm.rope %q at %offset {head_dim = 16 : i64, heads = 4 : i64, theta = 1.0e+04 : f64}
        : (tensor<?x64xf32>, i32) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, I32:$offset, I64Attr:$heads,
                       I64Attr:$head_dim, F64Attr:$theta);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $input `at` $offset attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_GatedActivationOp : TM_Op<"gated_activation", [TM_InfersShape, Pure, SameOperandsAndResultType]> {
  let summary = "act(gate) * up, the middle of a gated feed-forward";
  let description = [{
    swiglu is `kind = "silu"`, geglu `kind = "gelu"`.

    ```mlir
    %h = tm.gated_activation %gate, %up {kind = "silu"} : tensor<?x128xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$gate, TM_Activations:$up, StrAttr:$kind);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TM_CacheAppendOp : TM_Op<"cache_append",
    [TM_InfersShape, MemoryEffects<[MemRead, MemWrite]>, AllTypesMatch<["input", "result"]>]> {
  let summary = "Appends rows to a layer's key or value cache and returns all cached rows";
  let description = [{
    Writes the call's rows after the `offset` rows already cached in the
    cache slot `name` (sized max_seq rows) and yields rows [0, offset + T): the
    keys or values attention reads when decoding token by token.
    `precision` ("f16" or "bf16"; f32 when absent) is how the cache stores
    its rows: each value rounded to that format, ties to even, as it is
    appended, so the yielded rows hold the rounded values (`kv_cache = ...`).

    ```mlir
    %keys = tm.cache_append %k at %offset {name = "decoder.layers.0.self_attn.k", precision = "bf16"}
        : (tensor<?x64xf32>, i32) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, I32:$offset, StrAttr:$name, I64Attr:$capacity,
                       OptionalAttr<StrAttr>:$precision);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $input `at` $offset attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_CacheReadOp : TM_Op<"cache_read", [MemoryEffects<[MemRead]>]> {
  let summary = "Reads every row a cache holds (the encoder's keys or values)";
  let description = [{
    An encoder-decoder model encodes its source once: `@encode` appends the
    cross-attention keys and values of every decoder layer to caches, and
    each decoding step of `@forward` reads them back with this op. The result
    has one row per source token. `precision` is the cache's, as the
    appending op gives it.

    ```mlir
    %keys = tm.cache_read {capacity = 64 : i64, name = "decoder.layers.0.cross_attn.k"} : tensor<?x32xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, I64Attr:$capacity, OptionalAttr<StrAttr>:$precision);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TM_SeqProjectOp : TM_Op<"seq_project", [TM_InfersShape, Pure]> {
  let summary = "Projects a sequence's rows onto k rows (Linformer keys and values)";
  let description = [{
    `result = E[:, :L] . input`, with E the [k, max_seq] projection and L the
    sequence's valid length: `length` when given (padding), else every row.

    ```mlir
    %kp = tm.seq_project %k, %e : (tensor<?x64xf32>, tensor<16x128xf32>) -> tensor<16x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, 2DTensorOf<[F32]>:$projection,
                       Optional<I32>:$length);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $input `,` $projection (`length` $length^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_PoolOp : TM_Op<"pool", [TM_InfersShape, Pure]> {
  let summary = "Pools a sequence into one row (first token, or mean)";
  let description = [{
    `mean` averages the first `length` rows (the unpadded ones); the length
    operand is given exactly for `mean`.

    ```mlir
    %p = tm.pool %x {kind = "first"} : (tensor<?x64xf32>) -> tensor<1x64xf32>
    %m = tm.pool %x length %len {kind = "mean"} : (tensor<?x64xf32>, i32) -> tensor<1x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, Optional<I32>:$length, StrAttr:$kind);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $input (`length` $length^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // TM_OPS_TD
