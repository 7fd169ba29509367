# A missing required key points at the block that lacks it.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

# CHECK: {{.*}}missing-key.tm:[[@LINE+4]]:1: error: missing required key 'max_seq' in model 'm'
# CHECK-NEXT: {{^}}model m {
# CHECK-NEXT: {{^}}^~~~~
# CHECK-NEXT: {{^}}note: add max_seq = ... to the model block
model m {
  vocab = 100
  d_model = 64
# CHECK: {{.*}}missing-key.tm:[[@LINE+4]]:3: error: missing required key 'heads' in the encoder block
# CHECK-NEXT: {{^}}  encoder {
# CHECK-NEXT: {{^}}  ^~~~~~~
# CHECK-NEXT: {{^}}note: add heads = ... to the encoder block
  encoder {
    layers = 2
  }
}
