# bench/e2e/small/extra: the shape of the llama2.c stories15M model (d_model 288,
# 6 heads of 48, 6 layers, SwiGLU of 768, 32000 tokens). Written after the defaults.
model stories15m {
  vocab = 32000
  d_model = 288
  max_seq = 256
  position = rope(theta = 10000)
  output = lm_head(tied = true)
  decoder {
    layers = 6
    heads = 6
    d_ff = 768
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-5))
    final_norm = rmsnorm(eps = 1e-5)
  }
}
