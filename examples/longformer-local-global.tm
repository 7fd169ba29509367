# A Longformer-style encoder (Beltagy et al., 2020): BERT base with a 2-class
# head, whose lower six layers attend locally (a 128-token sliding window)
# while the first token stays global, seen by and seeing every position.
model bert_local {
  vocab = 30522
  d_model = 768
  max_seq = 512
  position = learned
  segments = 2
  embed_norm = layernorm(eps = 1e-12)
  output = classifier(classes = 2, pool = first)
  encoder {
    layers = 12
    heads = 12
    d_ff = 3072
    ffn = gelu
    norm = post(layernorm(eps = 1e-12))
    mask = padding
    layers 0..5 { mask = padding + sliding_window(size = 128) + global(tokens = [0]) }
  }
}
