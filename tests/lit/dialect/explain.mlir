// RUN: tmc-opt %s --allow-unregistered-dialect --tm-fuse-linear-activation=explain=true --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @explained
func.func @explained(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %w = tm.weight "w" : tensor<8x8xf32>
  %h = tm.linear %x, %w {activation = "none"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{fused relu into the tm.linear before it, as its epilogue}}
  %a = tm.activation %h {kind = "relu"} : tensor<?x8xf32>
  %s = tm.linear %x, %w {activation = "none"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  "test.use"(%s) : (tensor<?x8xf32>) -> ()
  // expected-remark @+1 {{not fused into a matmul epilogue: the tm.linear's result has another user}}
  %b = tm.activation %s {kind = "gelu"} : tensor<?x8xf32>
  // expected-remark @+1 {{not fused into a matmul epilogue: its input comes from an argument, not a tm.linear}}
  %c = tm.activation %x {kind = "silu"} : tensor<?x8xf32>
  return %a, %b, %c : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
