// Every tmk op prints and parses back to itself, and verifies.
// RUN: tmc-opt %s | tmc-opt | FileCheck %s

// CHECK: tmk.kernel @embed embed {position = "learned", position_rows = 16 : i64, scale = 1.000000e+00 : f64, table_rows = 100 : i64, width = 8 : i64}
tmk.kernel @embed embed {position = "learned", position_rows = 16 : i64, scale = 1.0 : f64, table_rows = 100 : i64, width = 8 : i64}
// CHECK: tmk.kernel @positions positions {position = "sinusoidal", width = 8 : i64}
tmk.kernel @positions positions {position = "sinusoidal", width = 8 : i64}
// CHECK: tmk.kernel @segments segments {position_rows = 2 : i64, width = 8 : i64}
tmk.kernel @segments segments {position_rows = 2 : i64, width = 8 : i64}
// CHECK: tmk.kernel @linear linear {activation = "gelu", bias, decode, in_width = 8 : i64, residual, width = 8 : i64}
tmk.kernel @linear linear {activation = "gelu", bias, decode, in_width = 8 : i64, residual, width = 8 : i64}
// CHECK: tmk.kernel @attention attention {alibi, head_dim = 4 : i64, heads = 2 : i64, kv_heads = 1 : i64, mask = #tm.mask<causal = true, padding = true>, scale = 5.000000e-01 : f64, width = 8 : i64}
tmk.kernel @attention attention {alibi, head_dim = 4 : i64, heads = 2 : i64, kv_heads = 1 : i64, mask = #tm.mask<causal = true, padding = true>, scale = 0.5 : f64, width = 8 : i64}
// CHECK: tmk.kernel @add add {width = 8 : i64}
tmk.kernel @add add {width = 8 : i64}
// CHECK: tmk.kernel @activation activation {activation = "relu", width = 8 : i64}
tmk.kernel @activation activation {activation = "relu", width = 8 : i64}
// CHECK: tmk.kernel @gated gated_activation {activation = "silu", width = 8 : i64}
tmk.kernel @gated gated_activation {activation = "silu", width = 8 : i64}
// CHECK: tmk.kernel @norm norm {bias, eps = 1.000000e-05 : f64, variant = "layernorm", width = 8 : i64}
tmk.kernel @norm norm {bias, eps = 1.0e-5 : f64, variant = "layernorm", width = 8 : i64}
// CHECK: tmk.kernel @add_norm add_norm {eps = {{.*}}E-7 : f64, variant = "rmsnorm", width = 8 : i64}
tmk.kernel @add_norm add_norm {eps = 1.0e-6 : f64, variant = "rmsnorm", width = 8 : i64}
// CHECK: tmk.kernel @rope rope {head_dim = 4 : i64, heads = 2 : i64, width = 8 : i64}
tmk.kernel @rope rope {head_dim = 4 : i64, heads = 2 : i64, width = 8 : i64}
// CHECK: tmk.kernel @rope_table rope_table {head_dim = 4 : i64, theta = 1.000000e+04 : f64, width = 4 : i64}
tmk.kernel @rope_table rope_table {head_dim = 4 : i64, theta = 1.0e4 : f64, width = 4 : i64}
// CHECK: tmk.kernel @linear_rope linear {activation = "none", head_dim = 4 : i64, in_width = 8 : i64, rope_columns = 8 : i64, width = 12 : i64}
tmk.kernel @linear_rope linear {activation = "none", head_dim = 4 : i64, in_width = 8 : i64, rope_columns = 8 : i64, width = 12 : i64}
// CHECK: tmk.kernel @pool pool {variant = "mean", width = 8 : i64}
tmk.kernel @pool pool {variant = "mean", width = 8 : i64}
// CHECK: tmk.kernel @project seq_project {length, position_rows = 16 : i64, table_rows = 4 : i64, width = 8 : i64}
tmk.kernel @project seq_project {length, position_rows = 16 : i64, table_rows = 4 : i64, width = 8 : i64}

// CHECK-LABEL: func.func @forward
// CHECK-SAME: attributes {tmk.arena_width = 24 : i64}
func.func @forward(%tokens: tensor<?xi32>, %offset: i32, %length: i32) -> tensor<1x8xf32> attributes {tmk.arena_width = 24 : i64} {
  // CHECK: %[[TABLE:.*]] = tmk.weight "embed.tokens" : tensor<100x8xf32>
  %table = tmk.weight "embed.tokens" : tensor<100x8xf32>
  %pos = tmk.weight "embed.positions" : tensor<16x8xf32>
  // CHECK: %[[X:.*]] = tmk.call @embed(%{{.*}}, %{{.*}}, %[[TABLE]], %{{.*}}) {arena = 0 : i64, from = "tm.embed"} : (tensor<?xi32>, i32, tensor<100x8xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  %x = tmk.call @embed(%tokens, %offset, %table, %pos) {arena = 0 : i64, from = "tm.embed"} : (tensor<?xi32>, i32, tensor<100x8xf32>, tensor<16x8xf32>) -> tensor<?x8xf32>
  // CHECK: %[[K:.*]] = tmk.cache_append %[[X]] at %{{.*}} {capacity = 16 : i64, name = "layers.0.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %k = tmk.cache_append %x at %offset {capacity = 16 : i64, name = "layers.0.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  // CHECK: tmk.cache_read {capacity = 16 : i64, name = "layers.0.cross.v"} : tensor<?x8xf32>
  %v = tmk.cache_read {capacity = 16 : i64, name = "layers.0.cross.v"} : tensor<?x8xf32>
  // CHECK: tmk.call @attention(%[[X]], %[[K]], %{{.*}}, %{{.*}}) {arena = 8 : i64, from = "tm.attention"}
  %a = tmk.call @attention(%x, %k, %v, %length) {arena = 8 : i64, from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  // CHECK: tmk.call @add(%[[X]], %{{.*}}) {arena = 0 : i64, from = "tm.add", in_place}
  %s = tmk.call @add(%x, %a) {arena = 0 : i64, from = "tm.add", in_place} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: tmk.call @pool(%{{.*}}, %{{.*}}) {from = "tm.pool"} : (tensor<?x8xf32>, i32) -> tensor<1x8xf32>
  %p = tmk.call @pool(%s, %length) {from = "tm.pool"} : (tensor<?x8xf32>, i32) -> tensor<1x8xf32>
  return %p : tensor<1x8xf32>
}

// A fused projection's stacked weight and the column split of its result.
tmk.kernel @qk linear {activation = "none", in_width = 8 : i64, width = 12 : i64}
// CHECK-LABEL: func.func @fused_projection
func.func @fused_projection(%x: tensor<?x8xf32>) -> tensor<?x4xf32> {
  %wq = tmk.weight "q.weight" : tensor<8x8xf32>
  %wk = tmk.weight "k.weight" : tensor<4x8xf32>
  // CHECK: %[[W:.*]] = tmk.concat %{{.*}}, %{{.*}} : (tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<12x8xf32>
  %w = tmk.concat %wq, %wk : (tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<12x8xf32>
  // CHECK: %[[Y:.*]] = tmk.call @qk(%arg0, %[[W]])
  %y = tmk.call @qk(%x, %w) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<12x8xf32>) -> tensor<?x12xf32>
  // CHECK: %{{.*}}:2 = tmk.split %[[Y]] : tensor<?x12xf32> -> tensor<?x8xf32>, tensor<?x4xf32>
  %q, %k = tmk.split %y : tensor<?x12xf32> -> tensor<?x8xf32>, tensor<?x4xf32>
  return %k : tensor<?x4xf32>
}
