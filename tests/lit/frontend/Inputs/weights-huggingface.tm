model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  position = rope(theta = 10000)
  weights = huggingface(family = llama)
  decoder {
    layers = 1
    heads = 4
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-5))
    final_norm = rmsnorm(eps = 1e-5)
  }
}
