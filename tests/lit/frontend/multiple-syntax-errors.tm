# The parser recovers at the next statement, so every syntax error in the file
# is reported in one run, each with its own location and caret.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
# CHECK: {{.*}}multiple-syntax-errors.tm:[[@LINE+3]]:10: error: expected a value for 'vocab', found newline
# CHECK-NEXT: {{^}}  vocab =
# CHECK-NEXT: {{^}}         ^
  vocab =
# CHECK: {{.*}}multiple-syntax-errors.tm:[[@LINE+3]]:10: error: unexpected character ':'
# CHECK-NEXT: {{^}}  d_model: 64
# CHECK-NEXT: {{^}}         ^
  d_model: 64
# CHECK: {{.*}}multiple-syntax-errors.tm:[[@LINE+3]]:16: error: expected a newline or ';' after the value of 'max_seq', found integer 64
# CHECK-NEXT: {{^}}  max_seq = 64 64
# CHECK-NEXT: {{^}}               ^~
  max_seq = 64 64
  encoder {
# CHECK: {{.*}}multiple-syntax-errors.tm:[[@LINE+1]]:13: error: expected a value (a number, true/false, a name, a call or a list), found '('
    heads = (
    layers = 2
  }
# CHECK: {{.*}}multiple-syntax-errors.tm:[[@LINE+1]]:3: error: unknown block 'encodr'
  encodr { }
}
