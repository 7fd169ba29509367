# bench/e2e/small/extra: d_model 256, 4 query heads over 2 key/value heads, rope,
# SwiGLU of 768, a 49152-token tied head, 8 layers. Written after the defaults.
model s256v49152 {
  vocab = 49152
  d_model = 256
  max_seq = 1024
  position = rope(theta = 10000)
  output = lm_head(tied = true)
  decoder {
    layers = 8
    heads = 4
    kv_heads = 2
    d_ff = 768
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-5))
    final_norm = rmsnorm(eps = 1e-5)
  }
}
