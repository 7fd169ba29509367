// RUN: tmc-opt --tm-fuse-residual-norm %s | FileCheck %s

// CHECK-LABEL: func.func @post_norm
func.func @post_norm(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "norm.weight" : tensor<8xf32>
  %b = tm.weight "norm.bias" : tensor<8xf32>
  // CHECK: tm.add_layer_norm %arg0, %arg1, %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64}
  // CHECK-NOT: tm.add
  // CHECK-NOT: tm.layer_norm
  %s = tm.add %x, %r : tensor<?x8xf32>
  %y = tm.layer_norm %s, %w, %b {eps = 1.0e-5 : f64} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// Pre-norm keeps the sum as the residual stream: nothing to fuse.
// CHECK-LABEL: func.func @pre_norm
func.func @pre_norm(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %w = tm.weight "norm.weight" : tensor<8xf32>
  %b = tm.weight "norm.bias" : tensor<8xf32>
  // CHECK: %[[S:.*]] = tm.add
  // CHECK: tm.layer_norm %[[S]]
  %s = tm.add %x, %r : tensor<?x8xf32>
  %y = tm.layer_norm %s, %w, %b {eps = 1.0e-5 : f64} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %s, %y : tensor<?x8xf32>, tensor<?x8xf32>
}
