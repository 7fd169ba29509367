// RUN: tmc-opt --tm-fuse-embedding-positions %s | FileCheck %s

// CHECK-LABEL: func.func @learned
func.func @learned(%tokens: tensor<?xi32>, %offset: i32) -> tensor<?x8xf32> {
  %table = tm.weight "embed.tokens" : tensor<10x8xf32>
  %pos = tm.weight "embed.positions" : tensor<4x8xf32>
  // CHECK: tm.embed %arg0 at %arg1, %{{.*}}, %{{.*}} {position = "learned", scale = 2.000000e+00 : f64}
  // CHECK-NOT: tm.add_positions
  %x = tm.embed %tokens at %offset, %table {position = "none", scale = 2.0 : f64} : (tensor<?xi32>, i32, tensor<10x8xf32>) -> tensor<?x8xf32>
  %y = tm.add_positions %x at %offset, %pos {kind = "learned"} : (tensor<?x8xf32>, i32, tensor<4x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @sinusoidal
func.func @sinusoidal(%tokens: tensor<?xi32>, %offset: i32) -> tensor<?x8xf32> {
  %table = tm.weight "embed.tokens" : tensor<10x8xf32>
  // CHECK: tm.embed %arg0 at %arg1, %{{.*}} {position = "sinusoidal", scale = 1.000000e+00 : f64}
  %x = tm.embed %tokens at %offset, %table {position = "none", scale = 1.0 : f64} : (tensor<?xi32>, i32, tensor<10x8xf32>) -> tensor<?x8xf32>
  %y = tm.add_positions %x at %offset {kind = "sinusoidal"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// Positions at another offset than the embedding's are a different
// computation: nothing to fold.
// CHECK-LABEL: func.func @other_offset
func.func @other_offset(%tokens: tensor<?xi32>, %a: i32, %b: i32) -> tensor<?x8xf32> {
  %table = tm.weight "embed.tokens" : tensor<10x8xf32>
  // CHECK: tm.embed {{.*}} {position = "none"
  // CHECK: tm.add_positions
  %x = tm.embed %tokens at %a, %table {position = "none", scale = 1.0 : f64} : (tensor<?xi32>, i32, tensor<10x8xf32>) -> tensor<?x8xf32>
  %y = tm.add_positions %x at %b {kind = "sinusoidal"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
