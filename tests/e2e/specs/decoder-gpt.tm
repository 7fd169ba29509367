# A GPT-style decoder: pre-norm, learned positions, causal mask, tied LM head.
model gpt_tiny {
  vocab = 50
  d_model = 32
  max_seq = 24
  position = learned
  output = lm_head(tied = true)
  decoder {
    layers = 2
    heads = 4
    d_ff = 64
    ffn = gelu_tanh
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
    mask = causal
  }
}
