# `layers A..B { }` ranges must lie inside the stack and not overlap; their
# keys are checked per layer, with a note at the stack key they clash with.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  position = rope
  encoder {
    layers = 5
    heads = 4
    kv_heads = 2
# CHECK: {{.*}}overrides.tm:[[@LINE+3]]:12: error: layer range 2..5 is outside the encoder's layers 0..4 (layers = 5)
# CHECK-NEXT: {{^}}    layers 2..5 { ffn = gelu }
# CHECK-NEXT: {{^}}           ^
    layers 2..5 { ffn = gelu }
    layers 0..1 { ffn = gelu }
# CHECK: {{.*}}overrides.tm:[[@LINE+4]]:12: error: layer range 1..2 overlaps 0..1
# CHECK-NEXT: {{^}}    layers 1..2 { bias = false }
# CHECK: {{^}}note: a layer takes its keys from one range only
# CHECK: {{.*}}overrides.tm:[[@LINE-4]]:12: note: the other range is here
    layers 1..2 { bias = false }
# CHECK: {{.*}}overrides.tm:[[@LINE+5]]:27: error: kv_heads (2) must divide heads (3)
# CHECK-NEXT: {{^}}    layers 2..2 { heads = 3; head_dim = 16 }
# CHECK-NEXT: {{^}}                          ^
# CHECK: {{.*}}overrides.tm:[[@LINE-14]]:5: note: 'kv_heads' is set for the whole encoder here
# CHECK-NEXT: {{^}}    kv_heads = 2
    layers 2..2 { heads = 3; head_dim = 16 }
# CHECK: {{.*}}overrides.tm:[[@LINE+2]]:19: error: 'final_norm' is not a key of the layers 3..3 block
# CHECK: {{^}}note: 'final_norm' belongs directly in the encoder block: a layer range cannot change it
    layers 3..3 { final_norm = none }
# CHECK: {{.*}}overrides.tm:[[@LINE+1]]:30: error: position = rope needs an even head_dim, found 5
    layers 4..4 { head_dim = 5 }
  }
}
