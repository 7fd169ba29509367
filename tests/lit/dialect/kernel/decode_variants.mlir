// tmk-decode-variants: a function whose attention reads a key/value cache it
// appends to runs again for every generated token with one row, so the
// kernels it calls get `decode`; kernels only an encoder calls do not.
// RUN: tmc-opt %s --tmk-decode-variants | FileCheck %s
// RUN: tmc-opt %s --tmk-decode-variants=explain 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// The encoder's kernels are spelled out whole: `decode` sorts first among
// attention's attributes, so a {{.*}} there would accept it (the mutant in
// mutants/ proves the full line catches it).
// CHECK: tmk.kernel @enc_linear linear {activation = "none", in_width = 8 : i64, width = 8 : i64}
// CHECK-NEXT: tmk.kernel @enc_attention attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<>, scale = 5.000000e-01 : f64, width = 8 : i64}
// CHECK-NEXT: tmk.kernel @linear linear {activation = "none", decode, in_width = 8 : i64, width = 8 : i64}
// CHECK-NEXT: tmk.kernel @attention attention {decode, {{.*}}}
// CHECK-NEXT: tmk.kernel @shared add {decode, width = 8 : i64}
tmk.kernel @enc_linear linear {activation = "none", in_width = 8 : i64, width = 8 : i64, decode}
tmk.kernel @enc_attention attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<>, scale = 0.5 : f64, width = 8 : i64}
tmk.kernel @linear linear {activation = "none", in_width = 8 : i64, width = 8 : i64}
tmk.kernel @attention attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true>, scale = 0.5 : f64, width = 8 : i64}
tmk.kernel @shared add {width = 8 : i64}

// An encoder (an encoder-decoder's @encode): its attention reads keys of
// this run alone, and it fills the cross-attention cache once.
func.func @encode(%x: tensor<?x8xf32>, %offset: i32) {
  %w = tmk.weight "w" : tensor<8x8xf32>
  %k = tmk.call @enc_linear(%x, %w) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %a = tmk.call @enc_attention(%k, %k, %k) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %s = tmk.call @shared(%a, %a) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %c = tmk.cache_append %s at %offset {capacity = 16 : i64, name = "cross.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return
}

// A decoder: self-attention over the P + T cached keys.
func.func @forward(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x8xf32> {
  %w = tmk.weight "w" : tensor<8x8xf32>
  %k = tmk.call @linear(%x, %w) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %keys = tmk.cache_append %k at %offset {capacity = 16 : i64, name = "self.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  %a = tmk.call @attention(%k, %keys, %keys) {from = "tm.attention"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %s = tmk.call @shared(%a, %a) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}

// EXPLAIN-NOT: @enc_
// EXPLAIN: remark: kernel @linear also runs one row per decoding step: decode variant
// EXPLAIN: remark: kernel @attention also runs
// EXPLAIN: remark: kernel @shared also runs
