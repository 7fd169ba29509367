# q4 over widths that 32 does not divide: d_model 70 (3 blocks of 32 per
# channel, the last padded), d_ff 100 (4 blocks); an untied head.
# precision.tm checks the bytes.
model q4_blocks {
  vocab = 10
  d_model = 70
  max_seq = 4
  output = lm_head(tied = false)
  precision = q4
  encoder {
    layers = 1
    heads = 2
    d_ff = 100
    bias = false
  }
}
