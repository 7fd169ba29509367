// RUN: tmc-opt %s --split-input-file --verify-diagnostics

func.func @linear_precision(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "w" : tensor<8x8xf32>
  // expected-error @+1 {{'tm.linear' op has precision = "int8"; expected one of "f32" "bf16"}}
  %y = tm.linear %x, %w {activation = "none", precision = "int8"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// expected-error @+1 {{'tmk.kernel' op has precision = "f16"; expected one of "f32" "bf16"}}
tmk.kernel @linear linear {activation = "none", in_width = 8 : i64, precision = "f16", width = 8 : i64}

// -----

// Only a GEMM has a precision.
// expected-error @+1 {{'tmk.kernel' op of kind add takes no 'precision'}}
tmk.kernel @add add {precision = "bf16", width = 8 : i64}
