# Reduced-precision GEMMs with K off every group: d_model 21 and d_ff 37 are
# odd (bf16 pads a pair), not multiples of 4 (int8 pads a quad; 21 and 37
# give 6 and 10 quads, chunks of 2) nor of 32 (q4 pads a block), and the
# head (N = 29) is narrower than a panel.
model odd_k_decoder {
  vocab = 29
  d_model = 21
  max_seq = 16
  position = learned
  output = lm_head(tied = true)
  decoder {
    layers = 2
    heads = 3
    d_ff = 37
    ffn = gelu_tanh
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
    mask = causal
  }
}
