# bench/e2e/small_models.py: d_model 384, 6 heads sharing 2 key/value heads,
# rope, GeGLU with biases, layernorm, an untied 32000-token head.
model gqa384 {
  vocab = 32000
  d_model = 384
  max_seq = 1024
  position = rope(theta = 10000)
  output = lm_head(tied = false)
  decoder {
    layers = 6
    heads = 6
    kv_heads = 2
    d_ff = 1024
    ffn = geglu
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
  }
}
