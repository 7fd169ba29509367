# A syntax error names the file, line and column, shows the line and puts a
# caret under the token that was not expected.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
# CHECK: {{.*}}syntax-error.tm:[[@LINE+3]]:9: error: expected '=' after 'vocab', found integer 100
# CHECK-NEXT: {{^}}  vocab 100
# CHECK-NEXT: {{^}}        ^~~
  vocab 100
  d_model = 64
  max_seq = 64
  encoder { layers = 1; heads = 1 }
}
