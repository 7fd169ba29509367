// RUN: tmc-opt --tm-fuse-embedding-positions %s | FileCheck %s

// CHECK-LABEL: func.func @learned
func.func @learned(%tokens: tensor<?xi32>) -> tensor<?x8xf32> {
  %table = tm.weight "embed.tokens" : tensor<10x8xf32>
  %pos = tm.weight "embed.positions" : tensor<4x8xf32>
  // CHECK: tm.embed %arg0, %{{.*}}, %{{.*}} {position = "learned", scale = 2.000000e+00 : f64}
  // CHECK-NOT: tm.add_positions
  %x = tm.embed %tokens, %table {position = "none", scale = 2.0 : f64} : (tensor<?xi32>, tensor<10x8xf32>) -> tensor<?x8xf32>
  %y = tm.add_positions %x, %pos {kind = "learned"} : (tensor<?x8xf32>, tensor<4x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @sinusoidal
func.func @sinusoidal(%tokens: tensor<?xi32>) -> tensor<?x8xf32> {
  %table = tm.weight "embed.tokens" : tensor<10x8xf32>
  // CHECK: tm.embed %arg0, %{{.*}} {position = "sinusoidal", scale = 1.000000e+00 : f64}
  %x = tm.embed %tokens, %table {position = "none", scale = 1.0 : f64} : (tensor<?xi32>, tensor<10x8xf32>) -> tensor<?x8xf32>
  %y = tm.add_positions %x {kind = "sinusoidal"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
