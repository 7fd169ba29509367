# random_specs.py seed 1252: an encoder-decoder whose encoder is a Linformer (k = 34) of width 16.
model rand_1252 {
  vocab = 4
  d_model = 16
  max_seq = 60
  position = rope(theta = 100)
  embed_scale = true
  embed_norm = none
  segments = 2
  share_embeddings = false
  encoder {
    layers = 1
    heads = 4
    norm = pre(rmsnorm(eps = 1e-5))
    bias = false
    mask = padding
    attention = linformer(k = 34)
    final_norm = none
  }
  decoder {
    layers = 1
    heads = 1
    kv_heads = 1
    ffn = swiglu
    bias = true
    mask = causal + dilated_window(size = 49, dilation = 1)
  }
}
