# Every size is in range, but the parameter count is not representable.
model huge {
  vocab = 2147483647
  d_model = 2147483647
  max_seq = 8
  encoder { layers = 4096; heads = 1 }
}
