// RUN: tmc-opt --split-input-file --tm-fuse-linear-residual %s | FileCheck %s
// RUN: tmc-opt --split-input-file --tm-fuse-linear-residual=explain=true --verify-diagnostics %s -o /dev/null

// Pre-norm: the sublayer's output projection adds the residual stream itself.
// The fused linear is the only op on values: no tm.add, nor a linear without
// the residual, on either side of it (mutants/ proves it).
// CHECK-LABEL: func.func @pre_norm_sublayer
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[H:.*]]: tensor<?x16xf32>)
// CHECK-NOT: tm.add
// CHECK-NOT: tm.linear
// CHECK: %[[S:.*]] = tm.linear %[[H]], %{{.*}}, %{{.*}} residual %[[X]] {activation = "gelu"}
// CHECK-NOT: tm.add
// CHECK-NOT: tm.linear
// CHECK: return %[[S]]
func.func @pre_norm_sublayer(%x: tensor<?x8xf32>, %h: tensor<?x16xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "down.weight" : tensor<8x16xf32>
  %b = tm.weight "down.bias" : tensor<8xf32>
  %y = tm.linear %h, %w, %b {activation = "gelu"} : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{fused the residual add into the tm.linear before it, as its epilogue}}
  %s = tm.add %x, %y : tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}

// -----

// Either operand order.
// CHECK-LABEL: func.func @linear_first
// CHECK-NOT: tm.add
// CHECK-NOT: tm.linear
// CHECK: %[[S:.*]] = tm.linear %arg1, %{{.*}} residual %arg0
// CHECK-NOT: tm.add
// CHECK-NOT: tm.linear
// CHECK: return %[[S]]
func.func @linear_first(%x: tensor<?x8xf32>, %h: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "o.weight" : tensor<8x8xf32>
  %y = tm.linear %h, %w {activation = "none"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{fused the residual add}}
  %s = tm.add %y, %x : tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}

// -----

// The projection's own value is needed elsewhere: the add stays.
// CHECK-LABEL: func.func @shared
// CHECK: %[[Y:.*]] = tm.linear
// CHECK-NOT: residual
// CHECK: %[[S:.*]] = tm.add %arg0, %[[Y]]
// CHECK-NEXT: return %[[S]], %[[Y]]
func.func @shared(%x: tensor<?x8xf32>, %h: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %w = tm.weight "o.weight" : tensor<8x8xf32>
  %y = tm.linear %h, %w {activation = "none"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{residual add not fused into a matmul epilogue: the tm.linear's result has another user}}
  %s = tm.add %x, %y : tensor<?x8xf32>
  return %s, %y : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @no_linear
func.func @no_linear(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-remark @+1 {{residual add not fused into a matmul epilogue: neither operand comes from a tm.linear}}
  %s = tm.add %x, %y : tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}
