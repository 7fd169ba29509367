model e {
  vocab = 100
  d_model = 64
  max_seq = 64
  kv_cache = f16
  encoder { layers = 1; heads = 4 }
}
