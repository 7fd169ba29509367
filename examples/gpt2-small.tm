# GPT-2 small (Radford et al., 2019): a decoder-only language model with 12
# pre-norm layers, learned positions and an LM head tied to the token table.
# 124,439,808 parameters, as in the published checkpoint.
model gpt2_small {
  vocab = 50257
  d_model = 768
  max_seq = 1024
  position = learned
  output = lm_head(tied = true)
  decoder {
    layers = 12
    heads = 12
    d_ff = 3072
    ffn = gelu_tanh
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
    mask = causal
  }
}
