# BERT base (Devlin et al., 2018) fine-tuned for a two-class task: a post-norm
# encoder over token, position and segment embeddings, whose first token
# ([CLS]) feeds a linear classifier. BERT's pooler layer is left out.
model bert_base {
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
  }
}
