// RUN: tmc-opt --tm-fuse-residual-norm %s | FileCheck %s
// The fused op must be the only one left: the CHECK-NOTs on both sides of it
// reject an unfused tm.add or tm.norm kept next to it (mutants/ proves it).
// `tm.add %` is not a prefix of `tm.add_norm`, and `tm.norm` is no part of it.

// CHECK-LABEL: func.func @post_norm
// CHECK-NOT: tm.add %
// CHECK-NOT: tm.norm
// CHECK: %[[Y:.*]] = tm.add_norm %arg0, %arg1, %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64, kind = "layernorm"}
// CHECK-NOT: tm.add %
// CHECK-NOT: tm.norm
// CHECK: return %[[Y]]
func.func @post_norm(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "norm.weight" : tensor<8xf32>
  %b = tm.weight "norm.bias" : tensor<8xf32>
  %s = tm.add %x, %r : tensor<?x8xf32>
  %y = tm.norm %s, %w, %b {eps = 1.0e-5 : f64, kind = "layernorm"} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// Pre-norm keeps the sum as the residual stream: nothing to fuse.
// CHECK-LABEL: func.func @pre_norm
// CHECK-NOT: tm.add_norm
// CHECK: %[[S:.*]] = tm.add %arg0, %arg1
// CHECK-NEXT: %[[N:.*]] = tm.norm %[[S]]
// CHECK-NEXT: return %[[S]], %[[N]]
func.func @pre_norm(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %w = tm.weight "norm.weight" : tensor<8xf32>
  %b = tm.weight "norm.bias" : tensor<8xf32>
  %s = tm.add %x, %r : tensor<?x8xf32>
  %y = tm.norm %s, %w, %b {eps = 1.0e-5 : f64, kind = "layernorm"} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %s, %y : tensor<?x8xf32>, tensor<?x8xf32>
}

// RMS norms fuse the same way and keep having no bias.
// CHECK-LABEL: func.func @rms
// CHECK-NOT: tm.add %
// CHECK-NOT: tm.norm
// CHECK: %[[Y:.*]] = tm.add_norm %arg0, %arg1, %{{[^,]*}} {{{.*}}kind = "rmsnorm"}
// CHECK-NOT: tm.add %
// CHECK-NOT: tm.norm
// CHECK: return %[[Y]]
func.func @rms(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "norm.weight" : tensor<8xf32>
  %s = tm.add %x, %r : tensor<?x8xf32>
  %y = tm.norm %s, %w {eps = 1.0e-6 : f64, kind = "rmsnorm"} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
