# A mask that leaves some position with no key to attend to is an error where
# it can be known, and linformer attention takes no positional mask.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  decoder {
    layers = 3
    heads = 4
# CHECK: {{.*}}mask-rows.tm:[[@LINE+4]]:26: error: this mask leaves position 0 with no key to attend to
# CHECK-NEXT: {{^}}    layers 0..0 { mask = causal + global(tokens = [4]) }
# CHECK-NEXT: {{^}}                         ^~~~~~
# CHECK-NEXT: {{^}}note: causal hides every key after it, and no other term allows one at or before it; add a sliding_window term or global(tokens = [0])
    layers 0..0 { mask = causal + global(tokens = [4]) }
# CHECK: {{.*}}mask-rows.tm:[[@LINE+4]]:31: error: attention = linformer cannot be used with the decoder's default mask (causal)
# CHECK-NEXT: {{^}}    layers 1..1 { attention = linformer(k = 16) }
# CHECK-NEXT: {{^}}                              ^~~~~~~~~
# CHECK-NEXT: {{^}}note: linformer projects the keys along the sequence down to k rows, so no key position is left to mask; use mask = none or mask = padding in this block
    layers 1..1 { attention = linformer(k = 16) }
# CHECK: {{.*}}mask-rows.tm:[[@LINE+1]]:64: error: attention = linformer cannot be combined with a 'sliding_window' mask
    layers 2..2 { mask = sliding_window(size = 8); attention = linformer(k = 16) }
  }
}
