# d_ff 66312: one more input than an int8 GEMM's int32 sums hold (66311),
# none too many for q4, whose int32 sums span one block of 32 each.
model wide {
  vocab = 10
  d_model = 8
  max_seq = 4
  encoder {
    layers = 1
    heads = 2
    d_ff = 66312
    bias = false
  }
}
