// tm-lower-to-kernels: every compute op becomes a call of a kernel of its own,
// with the op's operands, kind, static attributes and location.
// RUN: tmc-opt %s --tm-lower-to-kernels | FileCheck %s
// RUN: tmc-opt %s --tm-lower-to-kernels --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
// No tm op is left anywhere, before or after the calls checked below (a line
// that starts with a tm op, with or without results; `from = "tm.embed"` and
// #tm.mask are not ops). mutants/ proves a leftover op fails.
// RUN: tmc-opt %s --tm-lower-to-kernels | FileCheck %s --check-prefix=NO-TM
// NO-TM-NOT: {{^ *(%[^ ]+ = )?tm\.}}
// NO-TM: tmk.call
// NO-TM-NOT: {{^ *(%[^ ]+ = )?tm\.}}

// CHECK-DAG: tmk.kernel @embed embed {position = "none", scale = 1.000000e+00 : f64, table_rows = 100 : i64, width = 8 : i64}
// CHECK-DAG: tmk.kernel @linear linear {activation = "relu", bias, in_width = 8 : i64, width = 16 : i64}
// CHECK-DAG: tmk.kernel @linear_0 linear {activation = "none", in_width = 16 : i64, residual, width = 8 : i64}
// CHECK-DAG: tmk.kernel @attention attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<causal = true>, scale = 5.000000e-01 : f64, width = 8 : i64}
// CHECK-DAG: tmk.kernel @add_norm add_norm {eps = 1.000000e-05 : f64, variant = "rmsnorm", width = 8 : i64}
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[TOK:.*]]: tensor<?xi32>, %[[OFF:.*]]: i32)
func.func @block(%tokens: tensor<?xi32>, %offset: i32) -> tensor<?x8xf32> {
  // CHECK: %[[TABLE:.*]] = tmk.weight "embed.tokens" : tensor<100x8xf32>
  %table = tm.weight "embed.tokens" : tensor<100x8xf32>
  // CHECK: %[[X:.*]] = tmk.call @embed(%[[TOK]], %[[OFF]], %[[TABLE]]) {from = "tm.embed"}
  %x = tm.embed %tokens at %offset, %table {position = "none", scale = 1.0 : f64} : (tensor<?xi32>, i32, tensor<100x8xf32>) -> tensor<?x8xf32> loc(#embed)
  // CHECK: %[[K:.*]] = tmk.cache_append %[[X]] at %[[OFF]] {capacity = 16 : i64, name = "layers.0.k"}
  %k = tm.cache_append %x at %offset {capacity = 16 : i64, name = "layers.0.k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  // CHECK: %[[A:.*]] = tmk.call @attention(%[[X]], %[[K]], %[[K]]) {from = "tm.attention"}
  %a = tm.attention %x, %k, %k {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<causal = true>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %g = tm.weight "norm.weight" : tensor<8xf32>
  // CHECK: %[[N:.*]] = tmk.call @add_norm(%[[X]], %[[A]], %{{.*}}) {from = "tm.add_norm"}
  %n = tm.add_norm %x, %a, %g {eps = 1.0e-5 : f64, kind = "rmsnorm"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %w1 = tm.weight "up.weight" : tensor<16x8xf32>
  %b1 = tm.weight "up.bias" : tensor<16xf32>
  // CHECK: %[[H:.*]] = tmk.call @linear(%[[N]], %{{.*}}, %{{.*}}) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %h = tm.linear %n, %w1, %b1 {activation = "relu"} : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %w2 = tm.weight "down.weight" : tensor<8x16xf32>
  // CHECK: %[[Y:.*]] = tmk.call @linear_0(%[[H]], %{{.*}}, %[[N]]) {from = "tm.linear"}
  %y = tm.linear %h, %w2 residual %n {activation = "none"} : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: return %[[Y]]
  // CHECK-NOT: tm.
  return %y : tensor<?x8xf32>
}
#embed = loc("embed"("spec.tm":3:5))
// The kernel and the call keep the op's spec location.
// LOC: tmk.kernel @embed embed {{.*}} loc(#[[LOCK:loc[0-9]+]])
// LOC: tmk.call @embed({{.*}} loc(#[[LOCK]])
// LOC: #[[SPEC:loc[0-9]+]] = loc("spec.tm":3:5)
// LOC: #[[LOCK]] = loc("embed"(#[[SPEC]]))

// A fused projection: the stacked weight and the split map one to one, the
// GEMM becomes a kernel like any linear.
// CHECK-LABEL: func.func @fused_projection
// CHECK: %[[W:.*]] = tmk.concat %{{.*}}, %{{.*}} : (tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<12x8xf32>
// CHECK: %[[Y:.*]] = tmk.call @{{.*}}(%arg0, %[[W]]) {from = "tm.linear"}
// CHECK: %[[P:.*]]:2 = tmk.split %[[Y]] : tensor<?x12xf32> -> tensor<?x8xf32>, tensor<?x4xf32>
// CHECK: tmk.call @{{.*}}(%[[P]]#0, %[[P]]#0) {from = "tm.add"}
func.func @fused_projection(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x4xf32>) {
  %wq = tm.weight "q.weight" : tensor<8x8xf32>
  %wk = tm.weight "k.weight" : tensor<4x8xf32>
  %w = tm.concat %wq, %wk : (tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<12x8xf32>
  %y = tm.linear %x, %w {activation = "none"} : (tensor<?x8xf32>, tensor<12x8xf32>) -> tensor<?x12xf32>
  %q, %k = tm.split %y : tensor<?x12xf32> -> tensor<?x8xf32>, tensor<?x4xf32>
  %s = tm.add %q, %q : tensor<?x8xf32>
  return %s, %k : tensor<?x8xf32>, tensor<?x4xf32>
}
