# bench/e2e/small/extra: d_model 224 with 7 heads of 32 (an odd count), rope,
# SwiGLU of 608, a tied 32000-token head, 6 layers. Written after the defaults.
model t224 {
  vocab = 32000
  d_model = 224
  max_seq = 512
  position = rope(theta = 10000)
  output = lm_head(tied = true)
  decoder {
    layers = 6
    heads = 7
    d_ff = 608
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-5))
    final_norm = rmsnorm(eps = 1e-5)
  }
}
