# A stack block's heads need not divide d_model where every layer's override
# sets head_dim or its own heads: no layer takes the head_dim they would give.
# The stack's own head_dim is then null in `tmc check --json`; each layer
# group has its own. One layer left to the stack block's values: the error.
# RUN: %tmc check %s | FileCheck %s
# RUN: %tmc check --json %s | FileCheck %s --check-prefix=JSON
# RUN: sed 's/layers 2..3/layers 2..2/' %s > %t.tm
# RUN: not %tmc check %t.tm 2>&1 | FileCheck %s --check-prefix=GAP

# CHECK: model 'cover' is valid
# CHECK: layers 0..1: 5 heads (kv 5, head_dim 8)
# CHECK: layers 2..3: 4 heads (kv 4, head_dim 16)
# JSON: "head_dim": null,
# JSON: "layer_groups": [
# JSON: "head_dim": 8,
# JSON: "head_dim": 16,
# GAP: overrides-cover.tm.tmp.tm:[[@LINE+8]]:13: error: heads (5) must divide d_model (64)
model cover {
  vocab = 50
  d_model = 64
  max_seq = 16
  output = hidden
  encoder {
    layers = 4
    heads = 5
    layers 0..1 { head_dim = 8 }
    layers 2..3 { heads = 4 }
  }
}
