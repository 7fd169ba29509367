# Constants written as a person writes them, one layer's eps one part in 1e8
# from the others': kernel names must tell the two apart.
model names {
  vocab = 64
  d_model = 48
  max_seq = 32
  position = rope(theta = 500000)
  embed_scale = true
  output = lm_head(tied = true)
  decoder {
    layers = 2
    heads = 3
    kv_heads = 1
    d_ff = 96
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-5))
    final_norm = rmsnorm(eps = 1e-5)
    layers 1..1 { norm = pre(rmsnorm(eps = 1.00000001e-5)) }
  }
}
