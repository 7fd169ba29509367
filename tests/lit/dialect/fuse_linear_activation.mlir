// RUN: tmc-opt --tm-fuse-linear-activation %s | FileCheck %s

// The two linears must be the only ops on values: no tm.activation, nor a
// linear without the epilogue, left on either side of the fused one
// (mutants/ proves it).
// CHECK-LABEL: func.func @ffn
// CHECK-NOT: tm.activation
// CHECK-NOT: tm.linear
// CHECK: %[[H:.*]] = tm.linear %arg0, %{{.*}}, %{{.*}} {activation = "relu"}
// CHECK-NOT: tm.activation
// CHECK: %[[Y:.*]] = tm.linear %[[H]], %{{.*}} {activation = "none"}
// CHECK-NOT: tm.activation
// CHECK: return %[[Y]]
func.func @ffn(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %up = tm.weight "up.weight" : tensor<16x8xf32>
  %b = tm.weight "up.bias" : tensor<16xf32>
  %down = tm.weight "down.weight" : tensor<8x16xf32>
  %h = tm.linear %x, %up, %b {activation = "none"} : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %a = tm.activation %h {kind = "relu"} : tensor<?x16xf32>
  %y = tm.linear %a, %down {activation = "none"} : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// The linear's result has a second user, so the activation must stay apart.
// CHECK-LABEL: func.func @shared
func.func @shared(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %w = tm.weight "w" : tensor<8x8xf32>
  // CHECK: %[[H:.*]] = tm.linear {{.*}} {activation = "none"}
  // CHECK-NEXT: %[[A:.*]] = tm.activation %[[H]] {kind = "gelu"}
  // CHECK-NEXT: return %[[H]], %[[A]]
  %h = tm.linear %x, %w {activation = "none"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %a = tm.activation %h {kind = "gelu"} : tensor<?x8xf32>
  return %h, %a : tensor<?x8xf32>, tensor<?x8xf32>
}

// An existing epilogue is never replaced.
// CHECK-LABEL: func.func @already_fused
func.func @already_fused(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "w" : tensor<8x8xf32>
  // CHECK: tm.linear {{.*}} {activation = "relu"}
  // CHECK-NEXT: tm.activation {{.*}} {kind = "silu"}
  // CHECK-NEXT: return
  %h = tm.linear %x, %w {activation = "relu"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %a = tm.activation %h {kind = "silu"} : tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}
