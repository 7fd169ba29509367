# Without head_dim, heads must divide d_model; kv_heads must divide heads.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 770
  max_seq = 64
  encoder {
    layers = 2
# CHECK: {{.*}}divisibility.tm:[[@LINE+4]]:13: error: heads (12) must divide d_model (770)
# CHECK-NEXT: {{^}}    heads = 12
# CHECK-NEXT: {{^}}            ^~
# CHECK-NEXT: {{^}}note: choose heads that divide d_model, or set head_dim
    heads = 12
# CHECK: {{.*}}divisibility.tm:[[@LINE+3]]:16: error: kv_heads (5) must divide heads (12)
# CHECK-NEXT: {{^}}    kv_heads = 5
# CHECK-NEXT: {{^}}               ^
    kv_heads = 5
  }
}
