# kjv: a small Llama-style decoder trained on the King James Bible
# (examples/kjv/README.md). Its weights (kjv.safetensors) and its 2048-token
# byte-level BPE tokenizer (tokenizer/) are committed; train.py regenerates them.
model kjv {
  vocab = 2048
  d_model = 128
  max_seq = 128
  position = rope(theta = 10000)
  output = lm_head(tied = true)
  decoder {
    layers = 4
    heads = 4
    d_ff = 344
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-5))
    final_norm = rmsnorm(eps = 1e-5)
    mask = causal
  }
}
