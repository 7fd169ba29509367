# `precision` takes f32, bf16, int8 or q4 at every level it is allowed; anything
# else is an error at its value, listing the allowed ones. --precision
# replaces the model-level value, but the key is still checked.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s
# RUN: not %tmc check --precision=bf16 %s 2>&1 | FileCheck --strict-whitespace %s
# RUN: not %tmc check --precision=int8 %s 2>&1 | FileCheck --strict-whitespace %s
# RUN: not %tmc check --precision=q4 %s 2>&1 | FileCheck --strict-whitespace %s
# RUN: not %tmc compile --precision=bf16 --emit=tm %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
# CHECK: {{.*}}precision-errors.tm:[[@LINE+5]]:15: error: unknown value 'fp16' for 'precision'; expected one of f32, bf16, int8, q4
# CHECK-NEXT: {{^}}  precision = fp16
# CHECK-NEXT: {{^}}              ^~~~
# CHECK-NEXT: {{^}}              bf16
# CHECK-NEXT: {{^}}note: did you mean 'bf16'?
  precision = fp16
  decoder {
    layers = 2
    heads = 4
# CHECK: {{.*}}precision-errors.tm:[[@LINE+2]]:17: error: expected one of f32, bf16, int8, q4 for 'precision', found an integer
# CHECK-NEXT: {{^}}    precision = 16
    precision = 16
# CHECK: {{.*}}precision-errors.tm:[[@LINE+5]]:31: error: unknown value 'int4' for 'precision'; expected one of f32, bf16, int8, q4
# CHECK-NEXT: {{^}}    layers 1..1 { precision = int4 }
# CHECK-NEXT: {{^}}                              ^~~~
# CHECK-NEXT: {{^}}                              int8
# CHECK-NEXT: {{^}}note: did you mean 'int8'?
    layers 1..1 { precision = int4 }
# CHECK: {{.*}}precision-errors.tm:[[@LINE+2]]:36: error: unknown argument 'x' for 'bf16'; it takes no arguments
# CHECK-NEXT: {{^}}    layers 0..0 { precision = bf16(x = 1) }
    layers 0..0 { precision = bf16(x = 1) }
  }
}
