# bench/e2e/small/extra: d_model 128, 8 layers (deeper than narrow128) and a
# 16384-token head, so that the 128-wide layers, attention and the row-wise
# kernels take about half of the time. Written after the defaults.
model t128v16384 {
  vocab = 16384
  d_model = 128
  max_seq = 256
  position = rope(theta = 10000)
  output = lm_head(tied = true)
  decoder {
    layers = 8
    heads = 2
    d_ff = 384
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
  }
}
