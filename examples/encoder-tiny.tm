# encoder-tiny: the smallest useful encoder-only transformer, used by `make demo`.
# Two post-norm layers of 4-head self-attention and a ReLU feed-forward over a
# 100-token vocabulary; the executable returns the final hidden states.
model encoder_tiny {
  vocab = 100
  d_model = 64
  max_seq = 64
  position = learned
  output = hidden

  encoder {
    layers = 2
    heads = 4
    d_ff = 128
    ffn = relu
    norm = post(layernorm(eps = 1e-5))
  }
}
