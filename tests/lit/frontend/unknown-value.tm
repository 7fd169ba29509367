# A value outside a key's set lists the allowed ones and suggests the closest.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  encoder {
    layers = 2
    heads = 4
# CHECK: {{.*}}unknown-value.tm:[[@LINE+5]]:11: error: unknown value 'gleu' for 'ffn'; expected one of relu, gelu, gelu_tanh, silu, swiglu, geglu
# CHECK-NEXT: {{^}}    ffn = gleu
# CHECK-NEXT: {{^}}          ^~~~
# CHECK-NEXT: {{^}}          gelu
# CHECK-NEXT: {{^}}note: did you mean 'gelu'?
    ffn = gleu
# CHECK: {{.*}}unknown-value.tm:[[@LINE+1]]:27: error: unknown argument 'epsilon' for 'layernorm'; expected eps
    norm = post(layernorm(epsilon = 1e-5))
# CHECK: {{.*}}unknown-value.tm:[[@LINE+2]]:12: error: expected an integer for 'd_ff', found a name
# CHECK-NEXT: {{^}}    d_ff = wide
    d_ff = wide
  }
}
