# In an encoder-decoder model, cross-attention belongs to the decoder (where
# it is on by default); turning it off there is legal but draws a warning.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  encoder {
    layers = 1
    heads = 4
# CHECK: {{.*}}encoder-decoder.tm:[[@LINE+3]]:23: error: cross_attention = true is only valid in the decoder block
# CHECK-NEXT: {{^}}    cross_attention = true
# CHECK: {{^}}note: the decoder of an encoder-decoder model attends to the encoder's output; the encoder has nothing to attend to
    cross_attention = true
  }
  decoder {
    layers = 1
    heads = 4
# CHECK: {{.*}}encoder-decoder.tm:[[@LINE+2]]:23: warning: with cross_attention = false, the decoder never reads the encoder's output
# CHECK: {{^}}note: remove the encoder block for a decoder-only model
    cross_attention = false
  }
}
