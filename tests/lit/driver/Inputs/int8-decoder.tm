# A small decoder in int8 but for its last layer, kept in f32 as a user keeps
# a sensitive layer; its head (the tied embedding table) is int8 too.
model int8_decoder {
  vocab = 96
  d_model = 64
  max_seq = 32
  position = learned
  precision = int8
  output = lm_head(tied = true)
  decoder {
    layers = 3
    heads = 4
    d_ff = 160
    ffn = gelu
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
    layers 2..2 { precision = f32 }
  }
}
