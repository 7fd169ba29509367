// RUN: not tmc-opt %s --tm-lower-to-kernels 2>&1 | FileCheck %s

// Kernels need every width static: an op whose result width stayed open is
// reported at the spec line it came from.
func.func @open_width(%x: tensor<?x8xf32>) -> tensor<?x?xf32> {
  %w = tm.weight "w" : tensor<16x8xf32>
  // CHECK: spec.tm:13:5: error: 'tm.linear' op cannot be mapped to a kernel
  %y = tm.linear %x, %w {activation = "none"} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x?xf32> loc(#q)
  return %y : tensor<?x?xf32>
}
#q = loc("layers.0.self_attn.q"("spec.tm":13:5))
