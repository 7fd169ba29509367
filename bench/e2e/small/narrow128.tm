# bench/e2e/small_models.py: the narrowest, d_model 128 with 4 heads of 32,
# rope, SwiGLU, a 32000-token tied head (most of its FLOPs).
model narrow128 {
  vocab = 32000
  d_model = 128
  max_seq = 512
  position = rope(theta = 10000)
  output = lm_head(tied = true)
  decoder {
    layers = 4
    heads = 4
    d_ff = 352
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
  }
}
