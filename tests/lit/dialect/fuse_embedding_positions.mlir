// RUN: tmc-opt --tm-fuse-embedding-positions %s | FileCheck %s
// The fused embedding must be the function's only embedding and no
// tm.add_positions may be left on either side of it (mutants/ proves it).

// CHECK-LABEL: func.func @learned
// CHECK-NOT: tm.embed
// CHECK-NOT: tm.add_positions
// CHECK: %[[X:.*]] = tm.embed %arg0 at %arg1, %{{.*}}, %{{.*}} {position = "learned", scale = 2.000000e+00 : f64}
// CHECK-NOT: tm.embed
// CHECK-NOT: tm.add_positions
// CHECK: return %[[X]]
func.func @learned(%tokens: tensor<?xi32>, %offset: i32) -> tensor<?x8xf32> {
  %table = tm.weight "embed.tokens" : tensor<10x8xf32>
  %pos = tm.weight "embed.positions" : tensor<4x8xf32>
  %x = tm.embed %tokens at %offset, %table {position = "none", scale = 2.0 : f64} : (tensor<?xi32>, i32, tensor<10x8xf32>) -> tensor<?x8xf32>
  %y = tm.add_positions %x at %offset, %pos {kind = "learned"} : (tensor<?x8xf32>, i32, tensor<4x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @sinusoidal
// CHECK-NOT: tm.embed
// CHECK-NOT: tm.add_positions
// CHECK: %[[X:.*]] = tm.embed %arg0 at %arg1, %{{.*}} {position = "sinusoidal", scale = 1.000000e+00 : f64}
// CHECK-NOT: tm.embed
// CHECK-NOT: tm.add_positions
// CHECK: return %[[X]]
func.func @sinusoidal(%tokens: tensor<?xi32>, %offset: i32) -> tensor<?x8xf32> {
  %table = tm.weight "embed.tokens" : tensor<10x8xf32>
  %x = tm.embed %tokens at %offset, %table {position = "none", scale = 1.0 : f64} : (tensor<?xi32>, i32, tensor<10x8xf32>) -> tensor<?x8xf32>
  %y = tm.add_positions %x at %offset {kind = "sinusoidal"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// Positions at another offset than the embedding's are a different
// computation: nothing to fold.
// CHECK-LABEL: func.func @other_offset
func.func @other_offset(%tokens: tensor<?xi32>, %a: i32, %b: i32) -> tensor<?x8xf32> {
  %table = tm.weight "embed.tokens" : tensor<10x8xf32>
  // CHECK: %[[X:.*]] = tm.embed %arg0 at %arg1, {{.*}} {position = "none"
  // CHECK-NEXT: %[[Y:.*]] = tm.add_positions %[[X]] at %arg2 {kind = "sinusoidal"}
  // CHECK-NEXT: return %[[Y]]
  %x = tm.embed %tokens at %a, %table {position = "none", scale = 1.0 : f64} : (tensor<?xi32>, i32, tensor<10x8xf32>) -> tensor<?x8xf32>
  %y = tm.add_positions %x at %b {kind = "sinusoidal"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
