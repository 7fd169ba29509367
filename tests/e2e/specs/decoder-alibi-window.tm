# ALiBi positions with a causal sliding window (4 keys) and geglu.
model alibi_t {
  vocab = 30
  d_model = 32
  max_seq = 32
  position = alibi
  output = lm_head(tied = true)
  decoder {
    layers = 2
    heads = 4
    ffn = geglu
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
    mask = causal + sliding_window(size = 4)
  }
}
