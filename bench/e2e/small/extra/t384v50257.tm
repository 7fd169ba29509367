# bench/e2e/small/extra: d_model 384, 6 query heads over 2 key/value heads,
# learned positions, a plain GELU FFN of 1536 with biases, layernorm, an untied
# 50257-token head. Written after the defaults.
model t384v50257 {
  vocab = 50257
  d_model = 384
  max_seq = 1024
  position = learned
  output = lm_head(tied = false)
  decoder {
    layers = 6
    heads = 6
    kv_heads = 2
    d_ff = 1536
    ffn = gelu
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
  }
}
