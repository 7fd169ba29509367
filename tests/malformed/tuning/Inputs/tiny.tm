# A two-layer encoder small enough to tune in seconds.
model tiny_tune {
  vocab = 40
  d_model = 32
  max_seq = 16
  position = sinusoidal
  output = hidden
  encoder {
    layers = 2
    heads = 4
    d_ff = 64
    ffn = relu
    norm = post(layernorm(eps = 1e-5))
  }
}
