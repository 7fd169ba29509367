# bench/e2e/small_models.py: the README's decoder, d_model 256, grouped
# queries (8 heads, 2 key/value heads), rope, SwiGLU, GPT-2's 50257 tokens.
model readme256 {
  vocab = 50257
  d_model = 256
  max_seq = 256
  position = rope(theta = 10000)
  output = lm_head(tied = true)
  decoder {
    layers = 4
    heads = 8
    kv_heads = 2
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
  }
}
