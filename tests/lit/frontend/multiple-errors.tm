# Semantic checks go on after an error: every problem is reported in one run,
# in the order of the file.
# RUN: not %tmc check %s 2>&1 | FileCheck %s

model m {
# CHECK: {{.*}}multiple-errors.tm:[[@LINE+1]]:11: error: 'vocab' must be > 0, found 0
  vocab = 0
  d_model = 64
  max_seq = 64
# CHECK: {{.*}}multiple-errors.tm:[[@LINE+1]]:14: error: unknown value 'learnt' for 'position'
  position = learnt
# CHECK: {{.*}}multiple-errors.tm:[[@LINE+1]]:17: error: expected true or false for 'embed_scale', found an integer
  embed_scale = 1
# CHECK: {{.*}}multiple-errors.tm:[[@LINE+1]]:3: error: 'heads' is not a key of the model block
  heads = 4
  encoder {
    layers = 2
# CHECK: {{.*}}multiple-errors.tm:[[@LINE+1]]:13: error: heads (5) must divide d_model (64)
    heads = 5
# CHECK: {{.*}}multiple-errors.tm:[[@LINE+1]]:12: error: a pre-norm stack needs final_norm
    norm = pre(layernorm(eps = 1e-6))
# CHECK: {{.*}}multiple-errors.tm:[[@LINE+1]]:23: error: cross_attention = true needs an encoder-decoder model
    cross_attention = true
# CHECK: {{.*}}multiple-errors.tm:[[@LINE+1]]:12: error: layer range 1..2 is outside the encoder's layers 0..1 (layers = 2)
    layers 1..2 { bias = false }
  }
}
