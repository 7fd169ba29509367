# bench/e2e/small/extra: d_model 160, 5 query heads sharing one key/value head,
# rope (theta 500000), SwiGLU of 432, an untied 16384-token head. Written after the
# defaults, to check them on shapes they were not shaped on.
model s160 {
  vocab = 16384
  d_model = 160
  max_seq = 512
  position = rope(theta = 500000)
  output = lm_head(tied = false)
  decoder {
    layers = 5
    heads = 5
    kv_heads = 1
    d_ff = 432
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
  }
}
