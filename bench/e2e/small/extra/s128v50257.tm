# bench/e2e/small/extra: d_model 128 with 2 heads of 64 and GPT-2's 50257-token
# vocabulary (output rows off cache lines), rope, SwiGLU. Not tuned for: written
# after the defaults, to check them on shapes they were not shaped on.
model s128v50257 {
  vocab = 50257
  d_model = 128
  max_seq = 512
  position = rope(theta = 10000)
  output = lm_head(tied = true)
  decoder {
    layers = 4
    heads = 2
    d_ff = 384
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
  }
}
