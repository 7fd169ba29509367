# A float literal beyond double.
# RUN: %expect 1 'float-out-of-range.tm:9:40: error: float literal 1e999 is out of range' -- %tmc check %s
model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  encoder { layers = 1
            heads = 4
            norm = pre(layernorm(eps = 1e999)) }
}
