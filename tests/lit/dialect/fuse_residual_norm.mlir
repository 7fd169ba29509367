// RUN: tmc-opt --tm-fuse-residual-norm %s | FileCheck %s

// CHECK-LABEL: func.func @post_norm
func.func @post_norm(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "norm.weight" : tensor<8xf32>
  %b = tm.weight "norm.bias" : tensor<8xf32>
  // CHECK: tm.add_norm %arg0, %arg1, %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64, kind = "layernorm"}
  // CHECK-NOT: tm.add
  // CHECK-NOT: tm.norm
  %s = tm.add %x, %r : tensor<?x8xf32>
  %y = tm.norm %s, %w, %b {eps = 1.0e-5 : f64, kind = "layernorm"} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// Pre-norm keeps the sum as the residual stream: nothing to fuse.
// CHECK-LABEL: func.func @pre_norm
func.func @pre_norm(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %w = tm.weight "norm.weight" : tensor<8xf32>
  %b = tm.weight "norm.bias" : tensor<8xf32>
  // CHECK: %[[S:.*]] = tm.add
  // CHECK: tm.norm %[[S]]
  %s = tm.add %x, %r : tensor<?x8xf32>
  %y = tm.norm %s, %w, %b {eps = 1.0e-5 : f64, kind = "layernorm"} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %s, %y : tensor<?x8xf32>, tensor<?x8xf32>
}

// RMS norms fuse the same way and keep having no bias.
// CHECK-LABEL: func.func @rms
func.func @rms(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "norm.weight" : tensor<8xf32>
  // CHECK: tm.add_norm %arg0, %arg1, %{{[^,]*}} {{{.*}}kind = "rmsnorm"}
  %s = tm.add %x, %r : tensor<?x8xf32>
  %y = tm.norm %s, %w {eps = 1.0e-6 : f64, kind = "rmsnorm"} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
