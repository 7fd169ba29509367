// RUN: tmc-opt %s --split-input-file --verify-diagnostics

func.func @linear_precision(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "w" : tensor<8x8xf32>
  // expected-error @+1 {{'tm.linear' op has precision = "int4"; expected one of "f32" "bf16" "int8" "q4"}}
  %y = tm.linear %x, %w {activation = "none", precision = "int4"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// expected-error @+1 {{'tmk.kernel' op has precision = "f16"; expected one of "f32" "bf16" "int8" "q4"}}
tmk.kernel @linear linear {activation = "none", in_width = 8 : i64, precision = "f16", width = 8 : i64}

// -----

// Names are exact: "i8" is not int8, "q4_0" (ggml's name) not q4.
// expected-error @+1 {{'tmk.kernel' op has precision = "i8"; expected one of "f32" "bf16" "int8" "q4"}}
tmk.kernel @linear linear {activation = "none", in_width = 8 : i64, precision = "i8", width = 8 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op has precision = "q4_0"; expected one of "f32" "bf16" "int8" "q4"}}
tmk.kernel @linear linear {activation = "none", in_width = 8 : i64, precision = "q4_0", width = 8 : i64}

// -----

func.func @linear_q4_upper(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.linear' op has precision = "Q4"; expected one of "f32" "bf16" "int8" "q4"}}
  %y = tm.linear %x, %w {activation = "none", precision = "Q4"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Only a GEMM has a precision.
// expected-error @+1 {{'tmk.kernel' op of kind add takes no 'precision'}}
tmk.kernel @add add {precision = "bf16", width = 8 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op of kind add takes no 'precision'}}
tmk.kernel @add add {precision = "int8", width = 8 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op of kind add takes no 'precision'}}
tmk.kernel @add add {precision = "q4", width = 8 : i64}

// -----

// An int8 GEMM's int32 sum holds at most 2^31 / (255 * 127) = 66311 products.
func.func @int8_too_long(%x: tensor<?x66312xf32>) -> tensor<?x4xf32> {
  %w = tm.weight "w" : tensor<4x66312xf32>
  // expected-error @+1 {{'tm.linear' op precision int8 sums 66312 products per output in int32; at most 66311 fit (keep this layer in f32, bf16 or q4)}}
  %y = tm.linear %x, %w {activation = "none", precision = "int8"} : (tensor<?x66312xf32>, tensor<4x66312xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

func.func @int8_longest(%x: tensor<?x66311xf32>) -> tensor<?x4xf32> {
  %w = tm.weight "w" : tensor<4x66311xf32>
  %y = tm.linear %x, %w {activation = "none", precision = "int8"} : (tensor<?x66311xf32>, tensor<4x66311xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

// q4 sums each block of 32 products in int32 (at most 32 * 8 * 127) and
// the blocks in f32: no input is too wide, int8's limit least of all.
func.func @q4_wide(%x: tensor<?x66312xf32>) -> tensor<?x4xf32> {
  %w = tm.weight "w" : tensor<4x66312xf32>
  %y = tm.linear %x, %w {activation = "none", precision = "q4"} : (tensor<?x66312xf32>, tensor<4x66312xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

tmk.kernel @linear_q4_wide linear {activation = "none", in_width = 1048576 : i64, precision = "q4", width = 8 : i64}
