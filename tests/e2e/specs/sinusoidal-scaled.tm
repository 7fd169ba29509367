# Sinusoidal positions over sqrt(d_model)-scaled embeddings, one layer.
model sinusoidal_scaled {
  vocab = 40
  d_model = 32
  max_seq = 12
  position = sinusoidal
  embed_scale = true
  encoder {
    layers = 1
    heads = 2
    d_ff = 48
  }
}
