# gpt-mini: a small GPT-2-shaped decoder over GPT-2's own 50257-token BPE
# vocabulary (examples/tokenizers/gpt2), so that `make demo` can go from a text
# prompt to generated text. Untrained (random) weights produce random text.
model gpt_mini {
  vocab = 50257
  d_model = 128
  max_seq = 256
  position = learned
  output = lm_head(tied = false)
  decoder {
    layers = 2
    heads = 4
    d_ff = 512
    ffn = gelu_tanh
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
    mask = causal
  }
}
