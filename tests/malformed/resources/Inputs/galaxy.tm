# A valid spec far too large for any machine: 2^20 vocabulary x 2^20 d_model.
model galaxy {
  vocab = 1048576
  d_model = 1048576
  max_seq = 64
  position = learned
  output = hidden
  encoder {
    layers = 2
    heads = 16
  }
}
