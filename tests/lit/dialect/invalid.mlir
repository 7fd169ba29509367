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
  // expected-error @+1 {{has activation = "sigmoid"; expected one of "none" "relu" "gelu" "gelu_tanh" "silu" "tanh"}}
  %y = tm.linear %x, %w {activation = "sigmoid"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
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

// -----
// Edited IR is verified like a spec (#20): every value the spec bounds is
// bounded here too, so a hand-edited module fails at the op's spec line
// rather than with wrong output or inside Halide.

func.func @attention_scale_nan(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.attention' op needs scale > 0 and finite, found nan}}
  %a = tm.attention %q, %q, %q {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0x7FF8000000000000 : f64, mask = #tm.mask<>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @attention_scale_zero(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.attention' op needs scale > 0 and finite, found 0}}
  %a = tm.attention %q, %q, %q {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.0 : f64, mask = #tm.mask<>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @embed_scale_inf(%t: tensor<?xi32>, %o: i32) -> tensor<?x8xf32> {
  %table = tm.weight "embed.tokens" : tensor<10x8xf32>
  // expected-error @+1 {{'tm.embed' op needs scale > 0 and finite, found inf}}
  %x = tm.embed %t at %o, %table {position = "none", scale = 0x7FF0000000000000 : f64} : (tensor<?xi32>, i32, tensor<10x8xf32>) -> tensor<?x8xf32>
  return %x : tensor<?x8xf32>
}

// -----

func.func @mask_window_zero(%q: tensor<?x8xf32>, %len: i32) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.attention' op mask window must be in 1..2147483647, found 0 (a mask without the term leaves it out)}}
  %a = tm.attention %q, %q, %q length %len {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<padding = true, window = 0>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @mask_window_past_max_seq(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.attention' op mask window must be in 1..16, found 32}}
  %a = tm.attention %q, %q, %q {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<window = 32, globals = [0], max_seq = 16>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @mask_dilated_zero(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.attention' op mask dilated window must be in 1..2147483647, found 0}}
  %a = tm.attention %q, %q, %q {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<dilated = 0>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @mask_dilation_alone(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.attention' op mask dilation 2 needs a dilated window (dilated = N)}}
  %a = tm.attention %q, %q, %q {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<window = 4, dilation = 2>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @mask_random_zero(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.attention' op mask random_per_row must be in 1..64, found 0 (a mask without random keys leaves it out)}}
  %a = tm.attention %q, %q, %q {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<random_per_row = 0, max_seq = 64>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @mask_random_too_many(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.attention' op mask random_per_row must be in 1..4096, found 5000}}
  %a = tm.attention %q, %q, %q {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<random_per_row = 5000, max_seq = 8192>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @mask_seed_alone(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.attention' op mask random_seed needs random keys (random_per_row = N)}}
  %a = tm.attention %q, %q, %q {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<random_seed = 7>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @heads_zero(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.attention' op needs head_dim in 1..2147483647, found 0}}
  %a = tm.attention %q, %q, %q {heads = 2 : i64, kv_heads = 2 : i64, head_dim = 0 : i64, scale = 0.5 : f64, mask = #tm.mask<>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

// heads x head_dim would wrap around to 0 in int64.
func.func @heads_overflow(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.attention' op needs heads in 1..2147483647, found 4294967296}}
  %a = tm.attention %q, %q, %q {heads = 4294967296 : i64, kv_heads = 1 : i64, head_dim = 4294967296 : i64, scale = 0.5 : f64, mask = #tm.mask<>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @heads_product(%q: tensor<?x8xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.attention' op heads x head_dim (65536 x 65536) is more than 2147483647}}
  %a = tm.attention %q, %q, %q {heads = 65536 : i64, kv_heads = 1 : i64, head_dim = 65536 : i64, scale = 0.5 : f64, mask = #tm.mask<>} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %a : tensor<?x8xf32>
}

// -----

func.func @rope_theta_inf(%x: tensor<?x8xf32>, %o: i32) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.rope' op needs theta > 0 and finite, found inf}}
  %y = tm.rope %x at %o {heads = 2 : i64, head_dim = 4 : i64, theta = 0x7FF0000000000000 : f64} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @rope_heads_negative(%x: tensor<?x8xf32>, %o: i32) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.rope' op needs heads in 1..2147483647, found -2}}
  %y = tm.rope %x at %o {heads = -2 : i64, head_dim = -4 : i64, theta = 1.0e4 : f64} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @norm_eps_nan(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "w" : tensor<8xf32>
  // expected-error @+1 {{'tm.norm' op needs eps > 0 and finite, found nan}}
  %y = tm.norm %x, %w {eps = 0x7FF8000000000000 : f64, kind = "rmsnorm"} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @add_norm_eps_inf(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "w" : tensor<8xf32>
  // expected-error @+1 {{'tm.add_norm' op needs eps > 0 and finite, found inf}}
  %y = tm.add_norm %x, %x, %w {eps = 0x7FF0000000000000 : f64, kind = "rmsnorm"} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

func.func @weight_rows_past_index() -> tensor<2147483648x8xf32> {
  // expected-error @+1 {{'tm.weight' op weight 'embed.tokens' has size 2147483648 in dimension 0; sizes are 1..2147483647}}
  %w = tm.weight "embed.tokens" : tensor<2147483648x8xf32>
  return %w : tensor<2147483648x8xf32>
}

// -----

func.func @weight_empty() -> tensor<0x8xf32> {
  // expected-error @+1 {{'tm.weight' op weight 'w' has size 0 in dimension 0; sizes are 1..2147483647}}
  %w = tm.weight "w" : tensor<0x8xf32>
  return %w : tensor<0x8xf32>
}

// -----

func.func @cache_capacity(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.cache_append' op needs a cache name and a capacity > 0}}
  %k = tm.cache_append %x at %offset {capacity = 0 : i64, name = "k"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %k : tensor<?x8xf32>
}

// -----

func.func @cache_read_capacity() -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.cache_read' op needs a capacity of at most 2147483647 rows, found 4294967296}}
  %k = tm.cache_read {capacity = 4294967296 : i64, name = "k"} : tensor<?x8xf32>
  return %k : tensor<?x8xf32>
}

// -----

func.func @cache_precision(%x: tensor<?x8xf32>, %offset: i32) -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.cache_append' op has precision = "f8"; a cache stores "f16" or "bf16" rows, or f32 without it}}
  %k = tm.cache_append %x at %offset {capacity = 16 : i64, name = "k", precision = "f8"} : (tensor<?x8xf32>, i32) -> tensor<?x8xf32>
  return %k : tensor<?x8xf32>
}

// -----

func.func @cache_read_precision() -> tensor<?x8xf32> {
  // expected-error @+1 {{'tm.cache_read' op has precision = "f32"; a cache stores "f16" or "bf16" rows, or f32 without it}}
  %k = tm.cache_read {capacity = 16 : i64, name = "k", precision = "f32"} : tensor<?x8xf32>
  return %k : tensor<?x8xf32>
}
