// RUN: not tmc-opt --tm-infer-shapes %s 2>&1 | FileCheck %s

// A declared width that contradicts the weight is reported before any pass
// runs, at the op's location: for IR that came from a spec, the spec line.
// CHECK: model.tm:12:3: error: 'tm.linear' op result has size 32 in dimension 1, expected 16
func.func @contradiction(%x: tensor<?x8xf32>) -> tensor<?x32xf32> {
  %w = tm.weight "w" : tensor<16x8xf32>
  %y = tm.linear %x, %w {activation = "none"} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x32xf32> loc("model.tm":12:3)
  return %y : tensor<?x32xf32>
}
