# d_model 20 is not a multiple of 16 (nor 8): vector loops need tails.
model narrow {
  vocab = 13
  d_model = 20
  max_seq = 9
  position = sinusoidal
  embed_scale = true
  encoder {
    layers = 2
    heads = 4
    d_ff = 36
  }
}
