# A valid spec whose weights take 1.3 GB as f32 (a 32768 x 4096 token table
# and one 4096-wide encoder layer): more than a 1 GB address-space limit.
model gigabyte {
  vocab = 32768
  d_model = 4096
  max_seq = 64
  position = sinusoidal
  output = hidden
  encoder {
    layers = 1
    heads = 32
  }
}
