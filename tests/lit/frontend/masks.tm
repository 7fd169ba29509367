# Mask terms are checked against max_seq and against each other; every
# mistake is reported with its location.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  encoder {
    layers = 6
    heads = 4
# CHECK: {{.*}}masks.tm:[[@LINE+4]]:44: error: sliding_window size (128) is larger than max_seq (64)
# CHECK-NEXT: {{^}}    mask = padding + sliding_window(size = 128)
# CHECK-NEXT: {{^}}                                           ^~~
# CHECK-NEXT: {{^}}note: use size = 64 or less
    mask = padding + sliding_window(size = 128)
# CHECK: {{.*}}masks.tm:[[@LINE+3]]:46: error: global token position 64 is past the end of the sequence (max_seq = 64: positions 0..63)
# CHECK-NEXT: {{^}}    layers 0..0 { mask = global(tokens = [0, 64]) }
# CHECK-NEXT: {{^}}                                             ^~
    layers 0..0 { mask = global(tokens = [0, 64]) }
# CHECK: {{.*}}masks.tm:[[@LINE+1]]:43: error: random per_row (65) is larger than max_seq (64)
    layers 1..1 { mask = random(per_row = 65, seed = 1) }
# CHECK: {{.*}}masks.tm:[[@LINE+1]]:26: error: 'none' cannot be combined with other masks
    layers 2..2 { mask = none + causal }
# CHECK: {{.*}}masks.tm:[[@LINE+1]]:51: error: 'global' needs at least one position in 'tokens'
    layers 3..3 { mask = causal + global(tokens = []) }
# CHECK: {{.*}}masks.tm:[[@LINE+5]]:26: error: unknown value 'sliding' for 'mask'; expected one of none, causal, padding, sliding_window, dilated_window, global, random, block_sparse
# CHECK-NEXT: {{^}}    layers 4..4 { mask = sliding(size = 4) }
# CHECK-NEXT: {{^}}                         ^~~~~~~
# CHECK-NEXT: {{^}}                         sliding_window
# CHECK-NEXT: {{^}}note: did you mean 'sliding_window'?
    layers 4..4 { mask = sliding(size = 4) }
  }
}
