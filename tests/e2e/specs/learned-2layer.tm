# Learned positions, two post-norm layers, every dimension a multiple of 16.
model learned_2layer {
  vocab = 50
  d_model = 32
  max_seq = 16
  position = learned
  encoder {
    layers = 2
    heads = 4
    d_ff = 64
  }
}
