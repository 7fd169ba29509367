# Rotary positions on heads of 40: each half (20) is one full vector and a
# shifted one on AVX-512 (tests/lit/driver/rope_dense_loads.test).
model rope_half20 {
  vocab = 64
  d_model = 80
  max_seq = 32
  position = rope(theta = 10000)
  output = lm_head(tied = true)
  decoder {
    layers = 1
    heads = 2
    d_ff = 96
    ffn = swiglu
    norm = pre(rmsnorm(eps = 1e-5))
    final_norm = rmsnorm(eps = 1e-5)
  }
}
