// RUN: not tmc-opt %s --tm-lower-to-kernels --split-input-file 2>&1 | FileCheck %s

// Kernels need every width static: an op whose result width stayed open is
// reported at the spec line it came from.
func.func @open_width(%x: tensor<?x8xf32>) -> tensor<?x?xf32> {
  %w = tm.weight "w" : tensor<16x8xf32>
  // CHECK: spec.tm:13:5: error: 'tm.linear' op cannot be mapped to a kernel
  %y = tm.linear %x, %w {activation = "none"} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x?xf32> loc(#q)
  return %y : tensor<?x?xf32>
}
#q = loc("layers.0.self_attn.q"("spec.tm":13:5))

// -----

// Keys and values stored apart (kv_cache) cannot be read by one kernel.
func.func @kv_stored_apart(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x8xf32> {
  %k = tm.cache_append %x at %offset {capacity = 16 : i64, name = "k", precision = "f16"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  // CHECK: error: 'tm.attention' op reads keys stored as f16 and values stored as f32; one attention kernel reads both at one precision
  // CHECK-NOT: cannot be mapped
  %a = tm.attention %x, %k, %x {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<causal = true, decoder = true>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}
