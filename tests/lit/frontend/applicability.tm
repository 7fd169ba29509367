# Keys that do not apply where they are written: an error where they cannot
# mean anything, a warning where they are merely useless.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
# CHECK: {{.*}}applicability.tm:[[@LINE+4]]:14: error: segments needs an encoder: a decoder-only model has no token types
# CHECK-NEXT: {{^}}  segments = 2
# CHECK-NEXT: {{^}}             ^
# CHECK-NEXT: {{^}}note: segment (token-type) embeddings are added to the encoder's input; remove segments or add an encoder block
  segments = 2
# CHECK: {{.*}}applicability.tm:[[@LINE+1]]:3: warning: share_embeddings has no effect without both an encoder and a decoder
  share_embeddings = false
# CHECK: {{.*}}applicability.tm:[[@LINE+2]]:3: warning: pool = first reads position 0, which a causal decoder lets see only itself
# CHECK: {{^}}note: use classifier(classes = 2, pool = mean), or an encoder
  output = classifier(classes = 2)
  decoder {
    layers = 1
    heads = 4
# CHECK: {{.*}}applicability.tm:[[@LINE+3]]:23: error: cross_attention = true needs an encoder-decoder model
# CHECK-NEXT: {{^}}    cross_attention = true
# CHECK: {{^}}note: only a decoder next to an encoder block has an encoder output to attend to
    cross_attention = true
  }
}
