# bert-mini-encoder: a small BERT-shaped encoder with the original Transformer's
# sinusoidal positions and sqrt(d_model) embedding scale; returns hidden states.
model bert_mini_encoder {
  vocab = 1000
  d_model = 128
  max_seq = 128
  position = sinusoidal
  embed_scale = true
  output = hidden

  encoder {
    layers = 4
    heads = 4
    d_ff = 512
    ffn = relu
    norm = post(layernorm(eps = 1e-5))
  }
}
