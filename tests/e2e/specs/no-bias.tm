# bias = false: no linear layer carries a bias (norms keep theirs).
model no_bias {
  vocab = 30
  d_model = 32
  max_seq = 10
  position = learned
  encoder {
    layers = 2
    heads = 4
    d_ff = 32
    bias = false
  }
}
