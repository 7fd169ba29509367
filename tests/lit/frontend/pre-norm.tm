# A pre-norm stack leaves the residual stream unnormalized: it must say what
# its final_norm is (none is a valid answer).
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  decoder {
    layers = 2
    heads = 4
# CHECK: {{.*}}pre-norm.tm:[[@LINE+4]]:12: error: a pre-norm stack needs final_norm
# CHECK-NEXT: {{^}}    norm = pre(rmsnorm(eps = 1e-6))
# CHECK-NEXT: {{^}}           ^~~
# CHECK-NEXT: {{^}}note: add final_norm = rmsnorm(eps = 1e-6) to the decoder block, or final_norm = none
    norm = pre(rmsnorm(eps = 1e-6))
  }
}
