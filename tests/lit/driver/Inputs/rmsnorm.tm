model rms {
  vocab = 10
  d_model = 8
  max_seq = 4
  encoder {
    layers = 1
    heads = 2
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
  }
}
