# bench/e2e/small_models.py: the decoder of issue #26, d_model 320 with 5
# heads of 64, rotary positions, SwiGLU and a 32000-token tied head.
model rope320 {
  vocab = 32000
  d_model = 320
  max_seq = 2048
  position = rope(theta = 10000)
  output = lm_head(tied = true)
  decoder {
    layers = 6
    heads = 5
    d_ff = 864
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
  }
}
