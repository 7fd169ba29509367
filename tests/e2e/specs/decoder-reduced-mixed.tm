# Reduced precision in one model: a Llama-style decoder (rope, grouped-query
# attention, swiglu, rmsnorm, untied head) whose linears multiply in int8,
# its second layer in q4 (K = 48 and 72: partial blocks, an odd block count)
# and its third in f32, as a user keeps sensitive layers wider. Its key/value
# caches store bf16 rows, the third layer's f16 (kv_cache: the keys rounded
# after rope, through grouped-query heads). The reference quantizes and
# rounds the same inputs. (bf16 in a mixed model: the parity
# suite's encdec-precision-mixed and lit driver/bf16.test.)
model reduced_mixed {
  vocab = 80
  d_model = 48
  max_seq = 40
  position = rope(theta = 10000)
  precision = int8
  kv_cache = bf16
  output = lm_head(tied = false)
  decoder {
    layers = 3
    heads = 6
    kv_heads = 2
    d_ff = 72
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
    layers 1..1 { precision = q4 }
    layers 2..2 { precision = f32; kv_cache = f16 }
  }
}
