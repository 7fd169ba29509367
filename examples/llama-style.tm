# A small Llama-style decoder (Touvron et al., 2023): RMSNorm before each
# sublayer, SwiGLU feed-forward, rotary positions, grouped-query attention
# (8 query heads share 2 key/value heads), no biases, an untied LM head.
model llama_tiny {
  vocab = 32000
  d_model = 512
  max_seq = 2048
  position = rope(theta = 10000)
  output = lm_head(tied = false)
  decoder {
    layers = 8
    heads = 8
    kv_heads = 2
    d_ff = 1376
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
  }
}
