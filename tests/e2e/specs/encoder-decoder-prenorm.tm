# An encoder-decoder with pre-norm stacks, final norms, sinusoidal positions,
# embed_scale and shared embeddings (the Transformer base's conventions); the
# decoder's caches (its own keys and values, and the cross-attention's of the
# encoded source) store f16 rows. The encoder keeps no cache: it stays f32.
model seq2seq_pre {
  vocab = 37
  d_model = 24
  max_seq = 20
  position = sinusoidal
  embed_scale = true
  output = lm_head(tied = true)
  kv_cache = f16
  encoder { layers = 1; heads = 3; d_ff = 40; norm = pre(layernorm(eps = 1e-5)); final_norm = layernorm(eps = 1e-5) }
  decoder { layers = 2; heads = 3; d_ff = 40; norm = pre(rmsnorm(eps = 1e-6)); final_norm = rmsnorm(eps = 1e-6) }
}
