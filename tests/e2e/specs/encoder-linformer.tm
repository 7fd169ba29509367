# Linformer attention (keys and values projected to k = 6 rows) in layer 0,
# full attention in layer 1 (an override), GQA, a padding mask, mean pooling.
# Keys and values 20 wide (2 heads of 10): the projection's rows are not a
# whole number of vectors on AVX-512 or AVX2.
model lin_enc {
  vocab = 30
  d_model = 40
  max_seq = 24
  position = learned
  output = classifier(classes = 3, pool = mean)
  encoder {
    layers = 2
    heads = 4
    kv_heads = 2
    ffn = gelu
    attention = linformer(k = 6)
    mask = padding
    layers 1..1 { attention = full }
  }
}
