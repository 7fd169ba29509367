# Sparse encoder masks: sliding window + global tokens + seeded random keys,
# a dilated window in layer 1 (an override), and a mean-pooled classifier.
model local_enc {
  vocab = 30
  d_model = 32
  max_seq = 32
  position = learned
  output = classifier(classes = 3, pool = mean)
  encoder {
    layers = 2
    heads = 4
    ffn = gelu
    mask = sliding_window(size = 4) + global(tokens = [0, 7]) + random(per_row = 2, seed = 5)
    layers 1..1 { mask = dilated_window(size = 8, dilation = 2) }
  }
}
