# bench/e2e/small/extra: d_model 448 with 7 heads of 64, learned positions, GELU
# FFN of 1792 with biases, layernorm, an untied 32768-token head. Written after
# the defaults.
model s448 {
  vocab = 32768
  d_model = 448
  max_seq = 1024
  position = learned
  output = lm_head(tied = false)
  decoder {
    layers = 6
    heads = 7
    d_ff = 1792
    ffn = gelu
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
  }
}
