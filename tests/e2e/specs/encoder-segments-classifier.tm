# BERT-style: segment embeddings, embed_norm, post-norm, padding mask,
# first-token classifier.
model bert_seg {
  vocab = 30
  d_model = 32
  max_seq = 32
  position = learned
  segments = 2
  embed_norm = layernorm(eps = 1e-12)
  output = classifier(classes = 2, pool = first)
  encoder {
    layers = 2
    heads = 4
    ffn = gelu
    norm = post(layernorm(eps = 1e-12))
    mask = padding
  }
}
