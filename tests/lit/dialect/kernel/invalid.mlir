// Every tmk op rejects what its kernel could not run.
// RUN: tmc-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{'tmk.kernel' op of kind linear needs 'in_width'}}
tmk.kernel @linear linear {activation = "none", width = 8 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op of kind add takes no 'eps'}}
tmk.kernel @add add {eps = 1.0e-5 : f64, width = 8 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op needs width > 0, found 0}}
tmk.kernel @add add {width = 0 : i64}

// -----

// expected-error @+1 {{has activation = "sigmoid"; expected one of "none" "relu" "gelu" "gelu_tanh" "silu" "tanh"}}
tmk.kernel @linear linear {activation = "sigmoid", in_width = 8 : i64, width = 8 : i64}

// -----

// expected-error @+1 {{has activation = "none"; expected one of "relu" "gelu" "gelu_tanh" "silu"}}
tmk.kernel @act activation {activation = "none", width = 8 : i64}

// -----

// expected-error @+1 {{takes position_rows exactly when position = "learned"}}
tmk.kernel @embed embed {position = "learned", scale = 1.0 : f64, table_rows = 10 : i64, width = 8 : i64}

// -----

// expected-error @+1 {{has position = "none"; expected one of "sinusoidal" "learned"}}
tmk.kernel @positions positions {position = "none", width = 8 : i64}

// -----

// expected-error @+1 {{kv_heads (3) must divide heads (2)}}
tmk.kernel @attention attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 3 : i64, mask = #tm.mask<>, scale = 0.5 : f64, width = 8 : i64}

// -----

// expected-error @+1 {{width 12 is not heads x head_dim (2 x 4)}}
tmk.kernel @rope rope {head_dim = 4 : i64, heads = 2 : i64, width = 12 : i64}

// -----

// expected-error @+1 {{has variant = "batchnorm"; expected one of "layernorm" "rmsnorm"}}
tmk.kernel @norm norm {eps = 1.0e-5 : f64, variant = "batchnorm", width = 8 : i64}

// -----

// expected-error @+1 {{needs eps > 0}}
tmk.kernel @norm add_norm {eps = 0.0 : f64, variant = "rmsnorm", width = 8 : i64}

// -----

// expected-error @+1 {{has variant = "max"; expected one of "first" "mean"}}
tmk.kernel @pool pool {variant = "max", width = 8 : i64}

// -----

// expected-error @+1 {{of kind seq_project needs 'table_rows'}}
tmk.kernel @project seq_project {position_rows = 16 : i64, width = 8 : i64}

// -----

// expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [embed, positions, segments, linear, attention, add, activation, gated_activation, norm, add_norm, rope, pool, seq_project, rope_table]}}
tmk.kernel @conv conv {width = 8 : i64}

// -----

func.func @kernel_in_func() {
  // expected-error @+1 {{'tmk.kernel' op expects parent op 'builtin.module'}}
  tmk.kernel @add add {width = 8 : i64}
  return
}

// -----

func.func @no_kernel(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tmk.call' op calls 'missing', which is not a tmk.kernel}}
  %y = tmk.call @missing(%x, %x) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

tmk.kernel @add add {width = 8 : i64}
func.func @arity(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tmk.call' op passes 1 arguments; kernel @add takes 2}}
  %y = tmk.call @add(%x) {from = "tm.add"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

tmk.kernel @add add {width = 8 : i64}
func.func @result_width(%x: tensor<?x8xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'tmk.call' op result has width 4; kernel @add writes 8}}
  %y = tmk.call @add(%x, %x) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

tmk.kernel @linear linear {activation = "none", in_width = 4 : i64, width = 8 : i64}
func.func @input_width(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tmk.weight "w" : tensor<8x4xf32>
  // expected-error @+1 {{'tmk.call' op input has width 8; kernel @linear reads 4}}
  %y = tmk.call @linear(%x, %w) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<8x4xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @call_result(%x: tensor<?x8xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'tmk.call' op result #0 must be 2D tensor of 32-bit float values}}
  %y = tmk.call @add(%x, %x) {from = "tm.add"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

func.func @weight_name() {
  // expected-error @+1 {{'tmk.weight' op needs a non-empty tensor name}}
  %w = tmk.weight "" : tensor<8xf32>
  return
}

// -----

func.func @weight_shape() {
  // expected-error @+1 {{'tmk.weight' op result #0 must be statically shaped tensor}}
  %w = tmk.weight "w" : tensor<?xf32>
  return
}

// -----

func.func @append(%x: tensor<?x8xf32>, %offset: i32) {
  // expected-error @+1 {{'tmk.cache_append' op needs a cache name and a capacity > 0}}
  %k = tmk.cache_append %x at %offset {capacity = 0 : i64, name = "k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return
}

// -----

func.func @append_type(%x: tensor<?x8xf32>, %offset: i32) {
  // expected-error @+1 {{'tmk.cache_append' op failed to verify that all of {input, result} have same type}}
  %k = tmk.cache_append %x at %offset {capacity = 4 : i64, name = "k"} : (tensor<?x8xf32>, i32) -> tensor<?x4xf32>
  return
}

// -----

func.func @read() {
  // expected-error @+1 {{'tmk.cache_read' op needs a cache name and a capacity > 0}}
  %k = tmk.cache_read {capacity = 4 : i64, name = ""} : tensor<?x8xf32>
  return
}

// -----

func.func @concat_rows() -> tensor<13x8xf32> {
  %a = tmk.weight "a" : tensor<8x8xf32>
  %b = tmk.weight "b" : tensor<4x8xf32>
  // expected-error @+1 {{'tmk.concat' op result has 13 rows; the inputs stack to 12}}
  %w = tmk.concat %a, %b : (tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<13x8xf32>
  return %w : tensor<13x8xf32>
}

// -----

func.func @split_width(%x: tensor<?x12xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tmk.split' op part 1 must have a static width}}
  %a, %b = tmk.split %x : tensor<?x12xf32> -> tensor<?x8xf32>, tensor<?x?xf32>
  return %a : tensor<?x8xf32>
}

// -----
// Edited IR is verified like a spec (#20): what a kernel bakes in is bounded
// as the tm op it came from is, and a call passes tables of its sizes.

// expected-error @+1 {{'tmk.kernel' op needs scale > 0 and finite, found nan}}
tmk.kernel @attention attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<>, scale = 0x7FF8000000000000 : f64, width = 8 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op needs scale > 0 and finite, found inf}}
tmk.kernel @embed embed {position = "none", scale = 0x7FF0000000000000 : f64, table_rows = 10 : i64, width = 8 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op needs table_rows <= 2147483647 (a Halide index), found 2147483648}}
tmk.kernel @embed embed {position = "none", scale = 1.0 : f64, table_rows = 2147483648 : i64, width = 8 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op mask window must be in 1..2147483647, found 0}}
tmk.kernel @attention attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<padding = true, window = 0>, scale = 0.5 : f64, width = 8 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op mask random_per_row must be in 1..64, found 0}}
tmk.kernel @attention attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<random_per_row = 0, max_seq = 64>, scale = 0.5 : f64, width = 8 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op needs eps > 0 and finite, found nan}}
tmk.kernel @norm norm {eps = 0x7FF8000000000000 : f64, variant = "rmsnorm", width = 8 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op needs theta > 0 and finite, found -1}}
tmk.kernel @rope_table rope_table {head_dim = 4 : i64, theta = -1.0 : f64, width = 4 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op needs an even head_dim, found 3}}
tmk.kernel @rope rope {head_dim = 3 : i64, heads = 2 : i64, width = 6 : i64}

// -----

// A rope reads its angles from its table: theta is the table's.
// expected-error @+1 {{'tmk.kernel' op of kind rope takes no 'theta'}}
tmk.kernel @rope rope {head_dim = 4 : i64, heads = 2 : i64, theta = 1.0e4 : f64, width = 8 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op of kind rope_table needs 'theta'}}
tmk.kernel @rope_table rope_table {head_dim = 4 : i64, width = 4 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op needs an even head_dim, found 5}}
tmk.kernel @rope_table rope_table {head_dim = 5 : i64, theta = 1.0e4 : f64, width = 5 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op width 8 is not head_dim (4)}}
tmk.kernel @rope_table rope_table {head_dim = 4 : i64, theta = 1.0e4 : f64, width = 8 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op takes rope_columns and head_dim together}}
tmk.kernel @linear linear {activation = "none", in_width = 8 : i64, rope_columns = 8 : i64, width = 12 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op rope_columns 6 and width 12 must be whole numbers of heads of 4, rope_columns <= width}}
tmk.kernel @linear linear {activation = "none", head_dim = 4 : i64, in_width = 8 : i64, rope_columns = 6 : i64, width = 12 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op rope_columns 8 and width 10 must be whole numbers of heads of 4, rope_columns <= width}}
tmk.kernel @linear linear {activation = "none", head_dim = 4 : i64, in_width = 8 : i64, rope_columns = 8 : i64, width = 10 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op needs an even head_dim, found 3}}
tmk.kernel @linear linear {activation = "none", head_dim = 3 : i64, in_width = 8 : i64, rope_columns = 6 : i64, width = 12 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op turns its outputs by rotary positions, so it takes no activation or residual}}
tmk.kernel @linear linear {activation = "gelu", head_dim = 4 : i64, in_width = 8 : i64, rope_columns = 8 : i64, width = 12 : i64}

// -----

// expected-error @+1 {{'tmk.kernel' op turns its outputs by rotary positions, so it takes no activation or residual}}
tmk.kernel @linear linear {activation = "none", head_dim = 4 : i64, in_width = 8 : i64, residual, rope_columns = 8 : i64, width = 12 : i64}

// -----

tmk.kernel @linear linear {activation = "none", head_dim = 4 : i64, in_width = 8 : i64, rope_columns = 8 : i64, width = 12 : i64}
func.func @rope_table_of_other_width(%x: tensor<?x8xf32>, %t: tensor<?x8xf32>) {
  %w = tmk.weight "w" : tensor<12x8xf32>
  // expected-error @+1 {{argument 2 has size 8 in dimension 1; kernel @linear has head_dim = 4}}
  %y = tmk.call @linear(%x, %w, %t) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<12x8xf32>, tensor<?x8xf32>) -> tensor<?x12xf32>
  return
}

// -----

tmk.kernel @rope rope {head_dim = 4 : i64, heads = 2 : i64, width = 8 : i64}
func.func @rope_of_other_table(%x: tensor<?x8xf32>, %t: tensor<?x6xf32>) {
  // expected-error @+1 {{argument 1 has size 6 in dimension 1; kernel @rope has head_dim = 4}}
  %y = tmk.call @rope(%x, %t) {from = "tm.rope"} : (tensor<?x8xf32>, tensor<?x6xf32>) -> tensor<?x8xf32>
  return
}

// -----

// expected-error @+1 {{'tmk.kernel' op needs heads <= 2147483647 (a Halide index), found 4294967296}}
tmk.kernel @attention attention {head_dim = 4294967296 : i64, heads = 4294967296 : i64, kv_heads = 1 : i64, mask = #tm.mask<>, scale = 0.5 : f64, width = 8 : i64}

// -----

tmk.kernel @embed embed {position = "none", scale = 1.0 : f64, table_rows = 10 : i64, width = 8 : i64}
func.func @embed_table(%t: tensor<?xi32>, %o: i32) -> tensor<?x8xf32> {
  %table = tmk.weight "embed.tokens" : tensor<12x8xf32>
  // expected-error @+1 {{'tmk.call' op argument 2 has size 12 in dimension 0; kernel @embed has table_rows = 10}}
  %x = tmk.call @embed(%t, %o, %table) {from = "tm.embed"} : (tensor<?xi32>, i32, tensor<12x8xf32>) -> tensor<?x8xf32>
  return %x : tensor<?x8xf32>
}

// -----

func.func @weight_rows() -> tensor<2147483648x8xf32> {
  // expected-error @+1 {{'tmk.weight' op weight 'embed.tokens' has size 2147483648 in dimension 0; sizes are 1..2147483647}}
  %w = tmk.weight "embed.tokens" : tensor<2147483648x8xf32>
  return %w : tensor<2147483648x8xf32>
}

// -----

// expected-error @+1 {{has kv_precision = "int8"; expected one of "f16" "bf16"}}
tmk.kernel @attention attention {head_dim = 4 : i64, heads = 2 : i64, kv_heads = 2 : i64, kv_precision = "int8", mask = #tm.mask<>, scale = 0.5 : f64, width = 8 : i64}

// -----

// expected-error @+1 {{of kind linear takes no 'kv_precision'}}
tmk.kernel @linear linear {activation = "none", in_width = 8 : i64, kv_precision = "f16", width = 8 : i64}

// -----

func.func @cache_append_precision(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tmk.cache_append' op has precision = "fp16"; a cache stores "f16" or "bf16" rows, or f32 without it}}
  %k = tmk.cache_append %x at %offset {capacity = 16 : i64, name = "k", precision = "fp16"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %k : tensor<?x8xf32>
}

// -----

func.func @cache_append_keep(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tmk.cache_append' op keeps 16 earlier rows in a capacity of 16; 0 <= keep < capacity}}
  %k = tmk.cache_append %x at %offset {capacity = 16 : i64, keep = 16 : i64, name = "k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %k : tensor<?x8xf32>
}

// -----

tmk.kernel @rope rope {head_dim = 4 : i64, heads = 2 : i64, width = 8 : i64}
func.func @rope_of_an_offset(%x: tensor<?x8xf32>, %offset: i32) {
  // expected-error @+1 {{argument 1 must be rope_table rows (a 2-D tensor), found 'i32'}}
  %y = tmk.call @rope(%x, %offset) {from = "tm.rope"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return
}

// -----

tmk.kernel @linear linear {activation = "none", head_dim = 4 : i64, in_width = 8 : i64, rope_columns = 8 : i64, width = 12 : i64}
func.func @linear_rope_of_an_offset(%x: tensor<?x8xf32>, %offset: i32) {
  %w = tmk.weight "w" : tensor<12x8xf32>
  // expected-error @+1 {{argument 2 must be rope_table rows (a 2-D tensor), found 'i32'}}
  %y = tmk.call @linear(%x, %w, %offset) {from = "tm.linear"} : (tensor<?x8xf32>, tensor<12x8xf32>, i32) -> tensor<?x12xf32>
  return
}
