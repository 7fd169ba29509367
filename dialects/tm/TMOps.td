//===- TMOps.td - Operations of the tm dialect ------------*- tablegen -*-===//

#ifndef TM_OPS_TD
#define TM_OPS_TD

include "dialects/tm/TMDialect.td"
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

def TM_EmbedOp : TM_Op<"embed", [Pure]> {
  let summary = "Token embedding lookup, optionally scaled and with positions added";
  let description = [{
    `result[t, :] = table[tokens[t], :] * scale (+ position[t, :])`.
    As built, `position` is "none"; `--tm-fuse-embedding-positions` folds a
    following `tm.add_positions` into it ("sinusoidal", or "learned" with the
    positions table as third operand).

    ```mlir
    %x = tm.embed %tokens, %table {position = "none", scale = 1.0 : f64}
        : (tensor<?xi32>, tensor<100x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Tokens:$tokens, TM_Weight:$table,
                       Optional<TM_Weight>:$positions, F64Attr:$scale,
                       StrAttr:$position);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $tokens `,` $table (`,` $positions^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_AddPositionsOp : TM_Op<"add_positions", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "Adds absolute position encodings to a sequence";
  let description = [{
    `kind = "sinusoidal"`: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(same).
    `kind = "learned"`: row p of the positions table (third operand).

    ```mlir
    %y = tm.add_positions %x {kind = "sinusoidal"} : (tensor<?x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, Optional<TM_Weight>:$table,
                       StrAttr:$kind);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $input (`,` $table^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_LinearOp : TM_Op<"linear", [Pure]> {
  let summary = "y = act(x * W^T + b), PyTorch nn.Linear layout";
  let description = [{
    `weight` is [out, in] as in PyTorch; `bias` is optional. `activation` is
    "none" as built; `--tm-fuse-linear-activation` folds a following
    `tm.activation` into it.

    ```mlir
    %y = tm.linear %x, %w, %b {activation = "none"}
        : (tensor<?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, 2DTensorOf<[F32]>:$weight,
                       Optional<1DTensorOf<[F32]>>:$bias, StrAttr:$activation);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_AttentionOp : TM_Op<"attention", [Pure]> {
  let summary = "Multi-head scaled dot-product attention (softmax(q k^T * scale) v)";
  let description = [{
    Inputs are the projected queries [tokens, heads * head_dim] and keys and
    values [tokens, kv_heads * head_dim]; query head h reads kv head
    h / (heads / kv_heads). The result concatenates the heads in order.

    ```mlir
    %a = tm.attention %q, %k, %v {heads = 4 : i64, kv_heads = 4 : i64, head_dim = 16 : i64, scale = 0.25 : f64}
        : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$query, TM_Activations:$key,
                       TM_Activations:$value, I64Attr:$heads, I64Attr:$kv_heads,
                       I64Attr:$head_dim, F64Attr:$scale);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_AddOp : TM_Op<"add", [Pure, Commutative, SameOperandsAndResultType]> {
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

def TM_ActivationOp : TM_Op<"activation", [Pure, SameOperandsAndResultType]> {
  let summary = "Elementwise activation function";
  let description = [{
    `kind` is one of "relu", "gelu" (erf form), "gelu_tanh", "silu".

    ```mlir
    %y = tm.activation %x {kind = "relu"} : tensor<?x128xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, StrAttr:$kind);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def TM_LayerNormOp : TM_Op<"layer_norm", [Pure]> {
  let summary = "Layer normalization over the last dimension";
  let description = [{
    `(x - mean) / sqrt(var + eps) * weight + bias`, biased variance (PyTorch).

    ```mlir
    %y = tm.layer_norm %x, %w, %b {eps = 1.0e-05 : f64}
        : (tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, 1DTensorOf<[F32]>:$weight,
                       1DTensorOf<[F32]>:$bias, F64Attr:$eps);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def TM_AddLayerNormOp : TM_Op<"add_layer_norm", [Pure]> {
  let summary = "Fused residual add and layer normalization: layer_norm(x + residual)";
  let description = [{
    Formed by `--tm-fuse-residual-norm` so that the sum never round-trips
    through memory.

    ```mlir
    %y = tm.add_layer_norm %x, %r, %w, %b {eps = 1.0e-05 : f64}
        : (tensor<?x64xf32>, tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins TM_Activations:$input, TM_Activations:$residual,
                       1DTensorOf<[F32]>:$weight, 1DTensorOf<[F32]>:$bias,
                       F64Attr:$eps);
  let results = (outs TM_Activations:$result);
  let assemblyFormat = [{
    $input `,` $residual `,` $weight `,` $bias attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // TM_OPS_TD
