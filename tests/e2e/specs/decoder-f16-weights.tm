# f16 weights (widened to f32 at load) in a Llama-style decoder:
# rope, GQA, swiglu, rmsnorm, no biases, untied LM head.
model llama_half {
  dtype = f16
  vocab = 64
  d_model = 48
  max_seq = 40
  position = rope(theta = 10000)
  output = lm_head(tied = false)
  decoder {
    layers = 2
    heads = 6
    kv_heads = 2
    d_ff = 72
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
  }
}
