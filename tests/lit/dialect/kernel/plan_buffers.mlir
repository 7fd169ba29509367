// tmk-plan-buffers: arena offsets (units of T floats) from live ranges; a
// result may take the place of an input that dies at its call when the kernel
// allows it (elementwise, norms, a GEMM's residual), never of one a kernel
// reads across rows or features (a GEMM's input, attention, rope).
// RUN: tmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tmk-plan-buffers))' | FileCheck %s
// RUN: tmc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tmk-plan-buffers{explain}))' 2>&1 | FileCheck %s --check-prefix=EXPLAIN

tmk.kernel @norm norm {eps = 1.0e-5 : f64, variant = "rmsnorm", width = 8 : i64}
tmk.kernel @up linear {activation = "relu", in_width = 8 : i64, width = 32 : i64}
tmk.kernel @down linear {activation = "none", in_width = 32 : i64, residual, width = 8 : i64}
tmk.kernel @same linear {activation = "none", in_width = 8 : i64, residual, width = 8 : i64}
tmk.kernel @add add {width = 8 : i64}

// A pre-norm feed-forward: x + down(relu(up(norm(x)))).
// CHECK-LABEL: func.func @ffn
// CHECK-SAME: attributes {tmk.arena_width = 48 : i64, tmk.arena_width_no_reuse = 56 : i64}
func.func @ffn(%x0: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %g = tmk.weight "g" : tensor<8xf32>
  %w1 = tmk.weight "w1" : tensor<32x8xf32>
  %w2 = tmk.weight "w2" : tensor<8x32xf32>
  // The first value goes at 0.
  // CHECK: %[[X:.*]] = tmk.call @add({{.*}}) {arena = 0 : i64, from = "tm.add"}
  %x = tmk.call @add(%x0, %x0) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // x stays live (the residual), so the norm goes after it.
  // CHECK: %[[H:.*]] = tmk.call @norm(%[[X]], {{.*}}) {arena = 8 : i64, from = "tm.norm"}
  %h = tmk.call @norm(%x, %g) {from = "tm.norm"} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  // A GEMM never overwrites its input: up goes past h.
  // CHECK: %[[U:.*]] = tmk.call @up(%[[H]], {{.*}}) {arena = 16 : i64, from = "tm.linear"}
  %u = tmk.call @up(%h, %w1) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
  // The residual x dies here: down writes over it.
  // CHECK: %[[D:.*]] = tmk.call @down(%[[U]], {{.*}}, %[[X]]) {arena = 0 : i64, from = "tm.linear", in_place}
  %d = tmk.call @down(%u, %w2, %x) {from = "tm.linear"} : (tensor<?x32xf32>, tensor<8x32xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // Elementwise, its inputs dying: in place over the first (without reuse,
  // d would have gone past u, as h is still live: 56 units).
  // CHECK: %[[E:.*]] = tmk.call @add(%[[D]], %[[H]]) {arena = 0 : i64, from = "tm.add", in_place}
  %e = tmk.call @add(%d, %h) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // A norm stages its row first: in place too.
  // CHECK: %[[F:.*]] = tmk.call @norm(%[[E]], {{.*}}) {arena = 0 : i64, from = "tm.norm", in_place}
  %f = tmk.call @norm(%e, %g) {from = "tm.norm"} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  // The returned value is the output: no arena offset.
  // CHECK: %[[R:.*]] = tmk.call @norm(%[[F]], {{.*}}) {from = "tm.norm"}
  // CHECK: return %[[R]]
  %r = tmk.call @norm(%f, %g) {from = "tm.norm"} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}
// EXPLAIN: remark: @ffn: arena of 48 x T floats with 3 results in place (56 x T floats without)

// -----

tmk.kernel @same linear {activation = "none", in_width = 8 : i64, residual, width = 8 : i64}
tmk.kernel @add add {width = 8 : i64}

// Not in place: an input still read later, or a GEMM whose residual is also
// its input (read across features for every output).
// CHECK-LABEL: func.func @live
func.func @live(%x0: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tmk.weight "w" : tensor<8x8xf32>
  // CHECK: %[[X:.*]] = tmk.call @add({{.*}}) {arena = 0 : i64, from = "tm.add"}
  %x = tmk.call @add(%x0, %x0) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: %[[Y:.*]] = tmk.call @add(%[[X]], %[[X]]) {arena = 8 : i64, from = "tm.add"}
  %y = tmk.call @add(%x, %x) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: %[[Z:.*]] = tmk.call @same(%[[Y]], {{.*}}, %[[Y]]) {arena = 16 : i64, from = "tm.linear"}
  %z = tmk.call @same(%y, %w, %y) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: tmk.call @add(%[[Z]], %[[Z]]) {arena = 16 : i64, from = "tm.add", in_place}
  %r0 = tmk.call @add(%z, %z) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = tmk.call @add(%r0, %x) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

// A fused projection's parts are views of its buffer: it stays live until
// the last part is read (v, by the final add), so nothing placed before
// that may take its place.
tmk.kernel @qkv linear {activation = "none", in_width = 8 : i64, width = 24 : i64}
tmk.kernel @proj linear {activation = "none", in_width = 8 : i64, width = 8 : i64}
tmk.kernel @add add {width = 8 : i64}

// CHECK-LABEL: func.func @split_parts_keep_their_buffer
// CHECK-SAME: attributes {tmk.arena_width = 40 : i64
func.func @split_parts_keep_their_buffer(%x0: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tmk.weight "qkv.weight" : tensor<24x8xf32>
  %w2 = tmk.weight "proj.weight" : tensor<8x8xf32>
  // CHECK: tmk.call @add({{.*}}) {arena = 0 : i64
  %x = tmk.call @add(%x0, %x0) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // CHECK: %[[Y:.*]] = tmk.call @qkv({{.*}}) {arena = 8 : i64
  %y = tmk.call @qkv(%x, %w) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<24x8xf32>) -> tensor<?x24xf32>
  // CHECK: %[[P:.*]]:3 = tmk.split %[[Y]]
  %q, %k, %v = tmk.split %y : tensor<?x24xf32> -> tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
  // A part is never an in-place target: the sum goes where x was.
  // CHECK: tmk.call @add(%[[P]]#0, %[[P]]#1) {arena = 0 : i64, from = "tm.add"}
  %a = tmk.call @add(%q, %k) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // y is still live (v is read below): the projection goes past it.
  // CHECK: tmk.call @proj({{.*}}) {arena = 32 : i64, from = "tm.linear"}
  %c = tmk.call @proj(%a, %w2) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %b = tmk.call @add(%c, %v) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %b : tensor<?x8xf32>
}
