# Odd sizes everywhere and three layers, with a custom layernorm eps.
model odd_sizes {
  vocab = 37
  d_model = 48
  max_seq = 20
  position = learned
  encoder {
    layers = 3
    heads = 3
    d_ff = 72
    norm = post(layernorm(eps = 1e-6))
  }
}
