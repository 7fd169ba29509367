# Lexical errors: stray characters, integers that overflow 64 bits.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
# CHECK: {{.*}}lexical-errors.tm:[[@LINE+3]]:11: error: integer literal 99999999999999999999 does not fit in 64 bits
# CHECK-NEXT: {{^}}  vocab = 99999999999999999999
# CHECK-NEXT: {{^}}          ^~~~~~~~~~~~~~~~~~~~
  vocab = 99999999999999999999
# CHECK: {{.*}}lexical-errors.tm:[[@LINE+1]]:13: error: unexpected character '$'
  d_model = $64
  max_seq = 64
  encoder { layers = 1; heads = 1 }
}
