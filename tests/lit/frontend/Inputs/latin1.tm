# A spec with Latin-1 bytes (not UTF-8), in a comment and in a name.
model m {
  vocab = 100 # café
  position = léarned
  d_model = 64
  max_seq = 64
  encoder { layers = 1; heads = 1 }
}
