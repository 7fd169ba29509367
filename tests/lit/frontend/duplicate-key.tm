# A repeated key is an error at the repeat, with a note at the first one.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  encoder {
    layers = 2
    heads = 4
# CHECK: {{.*}}duplicate-key.tm:[[@LINE+7]]:5: error: duplicate key 'layers'
# CHECK-NEXT: {{^}}    layers = 3
# CHECK-NEXT: {{^}}    ^~~~~~
# CHECK-NEXT: {{.*}}duplicate-key.tm:[[@LINE-5]]:5: note: first given here
# CHECK-NEXT: {{^}}    layers = 2
# CHECK-NEXT: {{^}}    ^~~~~~
    d_ff = 128
    layers = 3
  }
}
