// RUN: tmc-opt %s --split-input-file --verify-diagnostics

func.func @linear_width(%x: tensor<?x8xf32>) -> tensor<?x16xf32> {
  %w = tm.weight "w" : tensor<16x4xf32>
  // expected-error @+1 {{'tm.linear' op input has size 8 in dimension 1, expected 4}}
  %y = tm.linear %x, %w {activation = "none"} : (tensor<?x8xf32>, tensor<16x4xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

func.func @linear_activation(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "w" : tensor<8x8xf32>
  // expected-error @+1 {{has activation = "tanh"; expected one of "none" "relu" "gelu" "gelu_tanh" "silu"}}
  %y = tm.linear %x, %w {activation = "tanh"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @gqa(%q: tensor<?x12xf32>, %k: tensor<?x8xf32>) -> tensor<?x12xf32> {
  // expected-error @+1 {{kv_heads (2) must divide heads (3)}}
  %a = tm.attention %q, %k, %k {heads = 3 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<>} : (tensor<?x12xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x12xf32>
  return %a : tensor<?x12xf32>
}

// -----

func.func @attention_width(%q: tensor<?x12xf32>) -> tensor<?x12xf32> {
  // expected-error @+1 {{'tm.attention' op query has size 12 in dimension 1, expected 16}}
  %a = tm.attention %q, %q, %q {heads = 4 : i64, kv_heads = 4 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<>} : (tensor<?x12xf32>, tensor<?x12xf32>, tensor<?x12xf32>) -> tensor<?x12xf32>
  return %a : tensor<?x12xf32>
}

// -----

func.func @norm_eps(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "w" : tensor<8xf32>
  // expected-error @+1 {{needs eps > 0}}
  %y = tm.norm %x, %w, %w {eps = 0.0 : f64, kind = "layernorm"} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @learned_without_table(%t: tensor<?xi32>, %o: i32) -> tensor<?x8xf32> {
  %table = tm.weight "embed.tokens" : tensor<10x8xf32>
  // expected-error @+1 {{takes a positions table exactly when position = "learned"}}
  %x = tm.embed %t at %o, %table {position = "learned", scale = 1.0 : f64} : (tensor<?xi32>, i32, tensor<10x8xf32>) -> tensor<?x8xf32>
  return %x : tensor<?x8xf32>
}

// -----

func.func @dynamic_weight() -> tensor<?x8xf32> {
  // expected-error @+1 {{weight 'w' must have a static shape}}
  %w = tm.weight "w" : tensor<?x8xf32>
  return %w : tensor<?x8xf32>
}

// -----

func.func @rms_with_bias(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "w" : tensor<8xf32>
  // expected-error @+1 {{kind = "rmsnorm" takes no bias operand}}
  %y = tm.norm %x, %w, %w {eps = 1.0e-6 : f64, kind = "rmsnorm"} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @layernorm_without_bias(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "w" : tensor<8xf32>
  // expected-error @+1 {{kind = "layernorm" needs a bias operand}}
  %y = tm.norm %x, %w {eps = 1.0e-6 : f64, kind = "layernorm"} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @rope_odd(%x: tensor<?x12xf32>, %o: i32) -> tensor<?x12xf32> {
  // expected-error @+1 {{needs heads > 0 and an even head_dim > 0}}
  %y = tm.rope %x at %o {heads = 4 : i64, head_dim = 3 : i64, theta = 1.0e4 : f64} : (tensor<?x12xf32>, i32) -> tensor<?x12xf32>
  return %y : tensor<?x12xf32>
}

// -----

func.func @mask_dilation(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{mask dilation must be >= 1, found 0}}
  %a = tm.attention %q, %q, %q {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<window = 4, dilation = 0>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @mask_global(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{global token 9 is outside [0, 8)}}
  %a = tm.attention %q, %q, %q {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<globals = [0, 9], max_seq = 8>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @pool_rows(%x: tensor<?x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{result has size 2 in dimension 0, expected 1}}
  %p = tm.pool %x {kind = "first"} : (tensor<?x8xf32>) -> tensor<2x8xf32>
  return %p : tensor<2x8xf32>
}

// -----

func.func @padding_without_length(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{takes a length operand exactly when its mask has padding}}
  %a = tm.attention %q, %q, %q {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<padding = true>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @segments_width(%x: tensor<?x8xf32>, %ids: tensor<?xi32>) -> tensor<?x8xf32> {
  %t = tm.weight "embed.segments" : tensor<2x4xf32>
  // expected-error @+1 {{'tm.add_segments' op segment table has size 4 in dimension 1, expected 8}}
  %y = tm.add_segments %x, %ids, %t : (tensor<?x8xf32>, tensor<?xi32>, tensor<2x4xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @positions_table(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x8xf32> {
  // expected-error @+1 {{takes a positions table exactly when kind = "learned"}}
  %y = tm.add_positions %x at %offset {kind = "learned"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @add_types(%x: tensor<?x8xf32>, %r: tensor<?x4xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.add' op requires the same type for all operands and results}}
  %y = "tm.add"(%x, %r) : (tensor<?x8xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @activation_kind(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.activation' op has kind = "none"; expected one of "relu" "gelu" "gelu_tanh" "silu"}}
  %y = tm.activation %x {kind = "none"} : tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @add_norm_residual(%x: tensor<?x8xf32>, %r: tensor<2x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "w" : tensor<8xf32>
  // expected-error @+1 {{'tm.add_norm' op input and residual must have the same type}}
  %y = tm.add_norm %x, %r, %w {eps = 1.0e-5 : f64, kind = "rmsnorm"} : (tensor<?x8xf32>, tensor<2x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @gated_kind(%g: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.gated_activation' op has kind = "tanh"}}
  %y = tm.gated_activation %g, %g {kind = "tanh"} : tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @cache_append_types(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x4xf32> {
  // expected-error @+1 {{'tm.cache_append' op failed to verify that all of {input, result} have same type}}
  %y = "tm.cache_append"(%x, %offset) {name = "k", capacity = 16 : i64} : (tensor<?x8xf32>, i32) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// -----

func.func @cache_read_capacity() -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.cache_read' op requires attribute 'capacity'}}
  %y = "tm.cache_read"() {name = "k"} : () -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @seq_project_rows(%x: tensor<?x8xf32>) -> tensor<3x8xf32> {
  %e = tm.weight "e" : tensor<4x16xf32>
  // expected-error @+1 {{'tm.seq_project' op result has size 3 in dimension 0, expected 4}}
  %y = tm.seq_project %x, %e : (tensor<?x8xf32>, tensor<4x16xf32>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

// -----

func.func @linear_residual_type(%h: tensor<?x16xf32>, %x: tensor<?x4xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "down.weight" : tensor<8x16xf32>
  // expected-error @+1 {{'tm.linear' op residual has type 'tensor<?x4xf32>', expected the result's 'tensor<?x8xf32>'}}
  %y = tm.linear %h, %w residual %x {activation = "none"} : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @concat_rows() -> tensor<13x8xf32> {
  %a = tm.weight "a" : tensor<8x8xf32>
  %b = tm.weight "b" : tensor<4x8xf32>
  // expected-error @+1 {{'tm.concat' op result has 13 rows; the inputs stack to 12}}
  %w = tm.concat %a, %b : (tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<13x8xf32>
  return %w : tensor<13x8xf32>
}

// -----

func.func @concat_inner() -> tensor<12x8xf32> {
  %a = tm.weight "a" : tensor<8x8xf32>
  %b = tm.weight "b" : tensor<4x6xf32>
  // expected-error @+1 {{'tm.concat' op input 1 has size 6 in dimension 1, expected 8}}
  %w = tm.concat %a, %b : (tensor<8x8xf32>, tensor<4x6xf32>) -> tensor<12x8xf32>
  return %w : tensor<12x8xf32>
}

// -----

func.func @concat_one() -> tensor<8x8xf32> {
  %a = tm.weight "a" : tensor<8x8xf32>
  // expected-error @+1 {{'tm.concat' op needs at least two weights to stack}}
  %w = tm.concat %a : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %w : tensor<8x8xf32>
}

// -----

func.func @split_width(%x: tensor<?x12xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.split' op parts are 11 columns wide; the input has 12}}
  %a, %b = tm.split %x : tensor<?x12xf32> -> tensor<?x8xf32>, tensor<?x3xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @split_rows(%x: tensor<4x12xf32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{'tm.split' op part rows has size 3 in dimension 0, expected 4}}
  %a, %b = tm.split %x : tensor<4x12xf32> -> tensor<3x8xf32>, tensor<4x4xf32>
  return %a : tensor<3x8xf32>
}
