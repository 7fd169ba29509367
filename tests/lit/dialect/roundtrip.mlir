// Every op prints and parses back to itself.
// RUN: tmc-opt %s | tmc-opt | FileCheck %s

// CHECK-LABEL: func.func @decoder_layer
func.func @decoder_layer(%tokens: tensor<?xi32>, %offset: i32) -> tensor<?x16xf32> {
  %table = tm.weight "embed.tokens" : tensor<20x8xf32>
  // CHECK: tm.embed %arg0 at %arg1, %{{.*}} {position = "sinusoidal", scale = 1.000000e+00 : f64}
  %x = tm.embed %tokens at %offset, %table {position = "sinusoidal", scale = 1.0 : f64} : (tensor<?xi32>, i32, tensor<20x8xf32>) -> tensor<?x8xf32>
  // CHECK: tm.add_positions %{{.*}} at %arg1 {kind = "sinusoidal"}
  %p = tm.add_positions %x at %offset {kind = "sinusoidal"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %w = tm.weight "w" : tensor<8xf32>
  // CHECK: tm.norm %{{.*}}, %{{[^,]*}} {{{.*}}kind = "rmsnorm"}
  %n = tm.norm %p, %w {eps = 1.0e-6 : f64, kind = "rmsnorm"} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  // CHECK: tm.rope %{{.*}} at %arg1 {head_dim = 4 : i64, heads = 2 : i64, theta = 1.000000e+04 : f64}
  %r = tm.rope %n at %offset {heads = 2 : i64, head_dim = 4 : i64, theta = 1.0e4 : f64} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  // CHECK: tm.cache_append %{{.*}} at %arg1 {capacity = 16 : i64, name = "decoder.layers.0.self_attn.k"}
  %k = tm.cache_append %r at %offset {name = "decoder.layers.0.self_attn.k", capacity = 16 : i64} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  // CHECK: tm.attention {{.*}} {alibi, head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true, decoder = true, window = 4, globals = [0], random_per_row = 2, random_seed = 7, max_seq = 16>, scale = 5.000000e-01 : f64}
  %a = tm.attention %r, %k, %k {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, alibi, mask = #tm.mask<causal = true, decoder = true, window = 4, globals = [0], random_per_row = 2, random_seed = 7, max_seq = 16>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %b = tm.weight "b" : tensor<8xf32>
  // CHECK: tm.add_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64, kind = "layernorm"}
  %s = tm.add_norm %a, %x, %w, %b {eps = 1.0e-5 : f64, kind = "layernorm"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %up = tm.weight "up" : tensor<16x8xf32>
  %h = tm.linear %s, %up {activation = "none"} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  // CHECK: tm.gated_activation %{{.*}}, %{{.*}} {kind = "silu"} : tensor<?x16xf32>
  %g = tm.gated_activation %h, %h {kind = "silu"} : tensor<?x16xf32>
  return %g : tensor<?x16xf32>
}

// CHECK-LABEL: func.func @classifier
func.func @classifier(%x: tensor<?x8xf32>, %len: i32) -> (tensor<1x8xf32>, tensor<1x8xf32>) {
  // CHECK: tm.pool %arg0 length %arg1 {kind = "mean"} : (tensor<?x8xf32>, i32) -> tensor<1x8xf32>
  %m = tm.pool %x length %len {kind = "mean"} : (tensor<?x8xf32>, i32) -> tensor<1x8xf32>
  // CHECK: tm.pool %arg0 {kind = "first"} : (tensor<?x8xf32>) -> tensor<1x8xf32>
  %f = tm.pool %x {kind = "first"} : (tensor<?x8xf32>) -> tensor<1x8xf32>
  return %m, %f : tensor<1x8xf32>, tensor<1x8xf32>
}

// CHECK-LABEL: func.func @padded_attention
func.func @padded_attention(%q: tensor<?x8xf32>, %len: i32) -> tensor<?x8xf32> {
  // CHECK: tm.attention %arg0, %arg0, %arg0 length %arg1 {{.*}}mask = #tm.mask<padding = true>
  %a = tm.attention %q, %q, %q length %len {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<padding = true>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @cross_attention_keys
func.func @cross_attention_keys() -> tensor<?x8xf32> {
  // CHECK: tm.cache_read {capacity = 16 : i64, name = "decoder.layers.0.cross_attn.k"} : tensor<?x8xf32>
  %k = tm.cache_read {name = "decoder.layers.0.cross_attn.k", capacity = 16 : i64} : tensor<?x8xf32>
  return %k : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @encoder_pieces
func.func @encoder_pieces(%x: tensor<?x8xf32>, %segments: tensor<?xi32>, %offset: i32, %len: i32) -> (tensor<?x8xf32>, tensor<4x8xf32>) {
  %table = tm.weight "embed.segments" : tensor<2x8xf32>
  // CHECK: tm.add_segments %arg0, %arg1, %{{.*}} : (tensor<?x8xf32>, tensor<?xi32>, tensor<2x8xf32>) -> tensor<?x8xf32>
  %s = tm.add_segments %x, %segments, %table : (tensor<?x8xf32>, tensor<?xi32>, tensor<2x8xf32>) -> tensor<?x8xf32>
  %positions = tm.weight "embed.positions" : tensor<16x8xf32>
  // CHECK: tm.add_positions %{{.*}} at %arg2, %{{.*}} {kind = "learned"}
  %p = tm.add_positions %s at %offset, %positions {kind = "learned"} : (tensor<?x8xf32>, i32, tensor<16x8xf32>) -> tensor<?x8xf32>
  // CHECK: tm.activation %{{.*}} {kind = "gelu_tanh"} : tensor<?x8xf32>
  %a = tm.activation %p {kind = "gelu_tanh"} : tensor<?x8xf32>
  // CHECK: tm.add %{{.*}}, %arg0 : tensor<?x8xf32>
  %sum = tm.add %a, %x : tensor<?x8xf32>
  %e = tm.weight "attn_proj.k.weight" : tensor<4x16xf32>
  // CHECK: tm.seq_project %{{.*}}, %{{.*}} length %arg3 : (tensor<?x8xf32>, tensor<4x16xf32>, i32) -> tensor<4x8xf32>
  %k = tm.seq_project %sum, %e length %len : (tensor<?x8xf32>, tensor<4x16xf32>, i32) -> tensor<4x8xf32>
  return %sum, %k : tensor<?x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @linear_residual
func.func @linear_residual(%h: tensor<?x16xf32>, %x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "down.weight" : tensor<8x16xf32>
  %b = tm.weight "down.bias" : tensor<8xf32>
  // CHECK: tm.linear %arg0, %{{.*}}, %{{.*}} residual %arg1 {activation = "none"} : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %y = tm.linear %h, %w, %b residual %x {activation = "none"} : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// A fused projection: stacked weights and the column split of its result.
// CHECK-LABEL: func.func @fused_projection
func.func @fused_projection(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x4xf32>) {
  %wq = tm.weight "q.weight" : tensor<8x8xf32>
  %wk = tm.weight "k.weight" : tensor<4x8xf32>
  // CHECK: %[[W:.*]] = tm.concat %{{.*}}, %{{.*}} : (tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<12x8xf32>
  %w = tm.concat %wq, %wk : (tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<12x8xf32>
  %y = tm.linear %x, %w {activation = "none"} : (tensor<?x8xf32>, tensor<12x8xf32>) -> tensor<?x12xf32>
  // CHECK: %{{.*}}:2 = tm.split %{{.*}} : tensor<?x12xf32> -> tensor<?x8xf32>, tensor<?x4xf32>
  %q, %k = tm.split %y : tensor<?x12xf32> -> tensor<?x8xf32>, tensor<?x4xf32>
  return %q, %k : tensor<?x8xf32>, tensor<?x4xf32>
}
