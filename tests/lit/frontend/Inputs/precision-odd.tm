# bf16 GEMMs over odd K (d_model 15, d_ff 31): the packed weights hold K in
# pairs, so each K is rounded up to even; with --precision=int8 they hold
# it in quads, rounded up to a multiple of 4 (precision.tm checks the bytes).
model odd {
  vocab = 10
  d_model = 15
  max_seq = 4
  precision = bf16
  encoder {
    layers = 1
    heads = 3
    d_ff = 31
    bias = false
  }
}
