# bench/e2e/small/extra: d_model 192 with 3 heads of 64, rope, SwiGLU of 512, a
# 32000-token tied head. Written after the defaults, to check them.
model s192 {
  vocab = 32000
  d_model = 192
  max_seq = 1024
  position = rope(theta = 10000)
  output = lm_head(tied = true)
  decoder {
    layers = 6
    heads = 3
    d_ff = 512
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-5))
    final_norm = rmsnorm(eps = 1e-5)
  }
}
