# An explicit head_dim (12) unlike d_model / heads (8): q/k/v are 48 wide.
model head_dim {
  vocab = 25
  d_model = 32
  max_seq = 8
  position = sinusoidal
  encoder {
    layers = 1
    heads = 4
    head_dim = 12
    d_ff = 64
  }
}
