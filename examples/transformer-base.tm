# The original Transformer, base size (Vaswani et al., 2017): an
# encoder-decoder translation model with post-norm layers, sinusoidal
# positions, embeddings scaled by sqrt(d_model) and one token table shared by
# source, target and the output projection.
model transformer_base {
  vocab = 37000
  d_model = 512
  max_seq = 256
  position = sinusoidal
  embed_scale = true
  output = lm_head(tied = true)
  encoder { layers = 6; heads = 8; d_ff = 2048; ffn = relu; mask = padding }
  decoder { layers = 6; heads = 8; d_ff = 2048; ffn = relu; mask = causal }
}
