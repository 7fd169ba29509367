// RUN: tmc-opt --split-input-file --tm-infer-shapes %s | FileCheck %s
// RUN: tmc-opt --split-input-file --tm-infer-shapes=explain=true --verify-diagnostics %s -o /dev/null

// Widths left open are fixed by the weights and attributes; the token count
// stays dynamic, and the function's result type follows.
// CHECK-LABEL: func.func @block
// CHECK-SAME: -> tensor<?x8xf32>
func.func @block(%tokens: tensor<?xi32>, %offset: i32) -> tensor<?x?xf32> {
  %table = tm.weight "embed" : tensor<50x8xf32>
  %wqkv = tm.weight "wq" : tensor<8x8xf32>
  %w1 = tm.weight "w1" : tensor<16x8xf32>
  %w2 = tm.weight "w2" : tensor<8x16xf32>
  %g = tm.weight "g" : tensor<8xf32>
  // CHECK: tm.embed {{.*}} -> tensor<?x8xf32>
  // expected-remark @+1 {{inferred 'tensor<?x8xf32>' (was 'tensor<?x?xf32>')}}
  %x = tm.embed %tokens at %offset, %table {position = "none", scale = 1.0 : f64} : (tensor<?xi32>, i32, tensor<50x8xf32>) -> tensor<?x?xf32>
  // CHECK: tm.linear {{.*}} -> tensor<?x8xf32>
  // expected-remark @+1 {{inferred}}
  %q = tm.linear %x, %wqkv {activation = "none"} : (tensor<?x?xf32>, tensor<8x8xf32>) -> tensor<?x?xf32>
  // CHECK: tm.rope {{.*}} -> tensor<?x8xf32>
  // expected-remark @+1 {{inferred}}
  %r = tm.rope %q at %offset {heads = 2 : i64, head_dim = 4 : i64, theta = 1.0e4 : f64} : (tensor<?x?xf32>, i32) -> tensor<?x?xf32>
  // CHECK: tm.attention {{.*}} -> tensor<?x8xf32>
  // expected-remark @+1 {{inferred}}
  %a = tm.attention %r, %r, %r {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<causal = true>} : (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  // CHECK: tm.add {{.*}} : tensor<?x8xf32>
  // expected-remark @+1 {{inferred}}
  %s = tm.add %a, %r : tensor<?x?xf32>
  // CHECK: tm.norm {{.*}} -> tensor<?x8xf32>
  // expected-remark @+1 {{inferred}}
  %n = tm.norm %s, %g {eps = 1.0e-6 : f64, kind = "rmsnorm"} : (tensor<?x?xf32>, tensor<8xf32>) -> tensor<?x?xf32>
  // CHECK: tm.linear {{.*}} -> tensor<?x16xf32>
  // expected-remark @+1 {{inferred}}
  %h = tm.linear %n, %w1 {activation = "gelu"} : (tensor<?x?xf32>, tensor<16x8xf32>) -> tensor<?x?xf32>
  // CHECK: tm.linear {{.*}} -> tensor<?x8xf32>
  // expected-remark @+1 {{inferred}}
  %y = tm.linear %h, %w2 {activation = "none"} : (tensor<?x?xf32>, tensor<8x16xf32>) -> tensor<?x?xf32>
  // CHECK: return {{.*}} : tensor<?x8xf32>
  return %y : tensor<?x?xf32>
}

// -----

// Fully typed IR (what MLIRGen builds) is left exactly as it is.
// CHECK-LABEL: func.func @typed
// CHECK: tm.pool %{{.*}} {kind = "first"} : (tensor<?x8xf32>) -> tensor<1x8xf32>
func.func @typed(%x: tensor<?x8xf32>) -> tensor<1x8xf32> {
  %p = tm.pool %x {kind = "first"} : (tensor<?x8xf32>) -> tensor<1x8xf32>
  return %p : tensor<1x8xf32>
}
