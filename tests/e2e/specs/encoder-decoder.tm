# An encoder-decoder (the original Transformer's shape, small): the decoder
# cross-attends to the encoder's output, encoded once per source; separate
# token tables, segments labelling the source, a tied head on the decoder's table.
model seq2seq {
  vocab = 40
  d_model = 32
  max_seq = 24
  position = learned
  share_embeddings = false
  segments = 2
  output = lm_head(tied = true)
  encoder { layers = 2; heads = 4; d_ff = 64; ffn = relu; mask = padding }
  decoder { layers = 2; heads = 4; kv_heads = 2; d_ff = 64; ffn = gelu; mask = causal }
}
