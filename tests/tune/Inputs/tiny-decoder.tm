# A two-layer decoder small enough to tune in seconds: its attention has a
# decoding-step variant (tmk_<kernel>_decode) that the tuner times at T = 1.
model tiny_dec {
  vocab = 40
  d_model = 32
  max_seq = 16
  position = learned
  output = lm_head
  decoder {
    layers = 2
    heads = 2
    d_ff = 64
    ffn = gelu
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
    mask = causal
  }
}
