# A small model touching many manifest rules: linformer in layer 0 of the
# encoder, a gated FFN in layer 1, f16 weights, separate token tables and an
# untied LM head with a bias.
model mixed {
  vocab = 64
  d_model = 16
  max_seq = 8
  dtype = f16
  share_embeddings = false
  output = lm_head(tied = false, bias = true)
  encoder {
    layers = 2
    heads = 2
    layers 0..0 { attention = linformer(k = 4) }
    layers 1..1 { ffn = swiglu; d_ff = 32 }
  }
  decoder { layers = 1; heads = 2; kv_heads = 1 }
}
