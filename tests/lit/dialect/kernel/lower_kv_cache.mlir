// tm-lower-to-kernels with reduced key/value caches (kv_cache): the cache ops
// keep their `precision`, and an attention that reads keys and values from
// f16 or bf16 caches becomes a kernel of its own with that `kv_precision`
// (it widens what it loads); one reading f32 caches has none.
// RUN: tmc-opt %s --tm-lower-to-kernels | FileCheck %s
// (Keys and values stored apart: lower_to_kernels_invalid.mlir.)

// CHECK-DAG: tmk.kernel @attention attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, kv_precision = "bf16", mask = #tm.mask<causal = true, decoder = true>, scale = 5.000000e-01 : f64, width = 8 : i64}
// CHECK-DAG: tmk.kernel @attention_0 attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, kv_precision = "f16", mask = #tm.mask<padding = true>, scale = 5.000000e-01 : f64, width = 8 : i64}
// CHECK-DAG: tmk.kernel @attention_1 attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true, decoder = true>, scale = 5.000000e-01 : f64, width = 8 : i64}
// CHECK-LABEL: func.func @step
func.func @step(%x: tensor<?x8xf32>, %offset: i32, %sl: i32) -> tensor<?x8xf32> {
  // CHECK: %[[K:.*]] = tmk.cache_append %{{.*}} at %{{.*}} {capacity = 16 : i64, name = "layers.0.k", precision = "bf16"}
  %k = tm.cache_append %x at %offset {capacity = 16 : i64, name = "layers.0.k", precision = "bf16"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  // CHECK: %[[V:.*]] = tmk.cache_append %{{.*}} at %{{.*}} {capacity = 16 : i64, name = "layers.0.v", precision = "bf16"}
  %v = tm.cache_append %x at %offset {capacity = 16 : i64, name = "layers.0.v", precision = "bf16"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  // CHECK: tmk.call @attention(%{{.*}}, %[[K]], %[[V]])
  %a = tm.attention %x, %k, %v {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<causal = true, decoder = true>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: %[[CK:.*]] = tmk.cache_read {capacity = 16 : i64, name = "layers.0.cross.k", precision = "f16"}
  %ck = tm.cache_read {capacity = 16 : i64, name = "layers.0.cross.k", precision = "f16"} : tensor<?x8xf32>
  %cv = tm.cache_read {capacity = 16 : i64, name = "layers.0.cross.v", precision = "f16"} : tensor<?x8xf32>
  // CHECK: tmk.call @attention_0(%{{.*}}, %[[CK]], %{{.*}}, %{{.*}})
  %c = tm.attention %a, %ck, %cv length %sl {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<padding = true>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %fk = tm.cache_append %c at %offset {capacity = 16 : i64, name = "layers.1.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  // CHECK: tmk.call @attention_1(
  %f = tm.attention %c, %fk, %fk {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<causal = true, decoder = true>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %f : tensor<?x8xf32>
}

