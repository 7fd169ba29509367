# Features of the language that this version cannot compile yet are recognized
# and reported as such, at their location, apart from real mistakes.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
# CHECK: {{.*}}not-supported.tm:[[@LINE+3]]:12: error: output = lm_head is not supported yet by this version of tmc
# CHECK-NEXT: {{^}}  output = lm_head(tied = true)
# CHECK-NEXT: {{^}}           ^~~~~~~
  output = lm_head(tied = true)
# CHECK: {{.*}}not-supported.tm:[[@LINE+1]]:11: error: dtype = f16 is not supported yet by this version of tmc
  dtype = f16
  encoder {
    layers = 4
    heads = 4
# CHECK: {{.*}}not-supported.tm:[[@LINE+1]]:12: error: mask = padding + sliding_window is not supported yet by this version of tmc
    mask = padding + sliding_window(size = 8)
# CHECK: {{.*}}not-supported.tm:[[@LINE+1]]:17: error: attention = linformer is not supported yet by this version of tmc
    attention = linformer(k = 16)
# CHECK: {{.*}}not-supported.tm:[[@LINE+1]]:5: error: layers 0..1 { } is not supported yet by this version of tmc
    layers 0..1 { ffn = gelu }
  }
# The decoder block as a whole is unsupported; its causal mask is not repeated.
# CHECK: {{.*}}not-supported.tm:[[@LINE+2]]:3: error: decoder { } is not supported yet by this version of tmc
# CHECK-NOT: mask = causal
  decoder {
    layers = 1
    heads = 1
    mask = causal
  }
}
