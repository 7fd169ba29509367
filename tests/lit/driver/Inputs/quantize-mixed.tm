# A small decoder with a layer in each precision, for `tmc quantize`: the
# head is int8 and tied, so its table (which the embedding looks up from the
# head's packed copy) is stored int8 too. d_model 40 and d_ff 37 are no
# multiples of 32: q4's last block of each row is padded.
model quantize_mixed {
  vocab = 50
  d_model = 40
  max_seq = 16
  position = learned
  precision = int8
  output = lm_head(tied = true)
  decoder {
    layers = 4
    heads = 4
    d_ff = 37
    ffn = swiglu
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
    layers 1..1 { precision = q4 }
    layers 2..2 { precision = bf16 }
    layers 3..3 { precision = f32 }
  }
}
