# A vocabulary head whose output rows are off cache lines (8200 = 16 x 512 + 8)
# and whose weights (128 x 8200 floats, 4.2 MB) stream from memory: on AVX-512
# its row tiles pass through groups of panels (panel_group.test).
model head_off_lines {
  vocab = 8200
  d_model = 128
  max_seq = 64
  position = learned
  output = lm_head(tied = false)
  decoder {
    layers = 1
    heads = 2
    d_ff = 256
    ffn = gelu
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
    mask = causal
  }
}
