# An argument given twice.
# RUN: %expect 1 'duplicate-argument.tm:7:38: error: duplicate argument .eps.' -- %tmc check %s
model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  embed_norm = layernorm(eps = 1e-5, eps = 1e-6)
  encoder { layers = 1
            heads = 4 }
}
