model lin {
  vocab = 10
  d_model = 8
  max_seq = 16
  position = alibi
  encoder {
    layers = 1
    heads = 2
    attention = linformer(k = 4)
  }
}
