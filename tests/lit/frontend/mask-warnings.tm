# Masks that are valid but almost surely not what was meant get warnings,
# which do not fail the check.
# RUN: %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  decoder {
    layers = 4
    heads = 4
# CHECK: {{.*}}mask-warnings.tm:[[@LINE+4]]:12: warning: without 'causal', this decoder's mask lets positions attend to later ones
# CHECK-NEXT: {{^}}    mask = padding
# CHECK-NEXT: {{^}}           ^~~~~~~
# CHECK-NEXT: {{^}}note: generating token by token will not match a full forward pass; add causal, e.g. mask = causal + padding
    mask = padding
# CHECK: {{.*}}mask-warnings.tm:[[@LINE+3]]:35: warning: 'causal' appears twice in the mask
# CHECK: {{.*}}mask-warnings.tm:[[@LINE+2]]:26: note: first given here
# CHECK: {{.*}}mask-warnings.tm:[[@LINE+1]]:64: warning: position 0 is listed twice in 'tokens'
    layers 0..0 { mask = causal + causal + global(tokens = [0, 0]) }
# CHECK: {{.*}}mask-warnings.tm:[[@LINE+1]]:35: warning: dilated_window(size = 4, dilation = 4) lets each query see only itself
    layers 1..1 { mask = causal + dilated_window(size = 4, dilation = 4) }
  }
}
# CHECK: mask-warnings.tm: model 'm' is valid
