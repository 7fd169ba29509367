# A BigBird-style encoder (Zaheer et al., 2020) for long documents: each
# position sees a 192-token sliding window, two global tokens and 64 keys
# drawn at random (seeded, so every run sees the same pattern), instead of all
# 4096 positions. Returns the final hidden states.
model bigbird_base {
  vocab = 50358
  d_model = 768
  max_seq = 4096
  position = learned
  embed_norm = layernorm(eps = 1e-12)
  output = hidden
  encoder {
    layers = 12
    heads = 12
    d_ff = 3072
    ffn = gelu_tanh
    norm = post(layernorm(eps = 1e-12))
    mask = padding + sliding_window(size = 192) + global(tokens = [0, 1]) + random(per_row = 64, seed = 0)
  }
}
