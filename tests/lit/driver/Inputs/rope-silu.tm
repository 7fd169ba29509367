# Every elementwise function a decoder computes: rotary positions, SiLU in a
# gated FFN, gelu (exact, erf) in a second stack's FFN, softmax's exp, norms.
model rope_silu {
  vocab = 64
  d_model = 64
  max_seq = 32
  position = rope(theta = 10000)
  output = lm_head(tied = true)
  decoder {
    layers = 2
    heads = 2
    d_ff = 96
    ffn = swiglu
    norm = pre(rmsnorm(eps = 1e-5))
    final_norm = rmsnorm(eps = 1e-5)
    mask = causal
    layers 1..1 { ffn = gelu }
  }
}
