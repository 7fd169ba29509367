# `kv_cache` takes f32, f16 or bf16, at model level, in the decoder block and
# in its `layers A..B { }` blocks; anything else is an error at its value.
# An encoder keeps no cache: the key in its block is an error, and at model
# level in a model without a decoder a warning. A decoder's linformer layer
# projects its cached keys with a kernel that reads f32 rows: refused with a
# reduced cache. --kv-cache replaces the model-level value; the key is still
# checked.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s
# RUN: not %tmc check --kv-cache=f32 %s 2>&1 | FileCheck --strict-whitespace %s
# RUN: %tmc check %S/Inputs/kv-cache-encoder.tm 2>&1 | FileCheck %s --check-prefix=ENCODER
# The flag on a model without a decoder is warned about too (against the file:
# a flag has no line), and the model stays f32.
# RUN: %tmc check --kv-cache=bf16 %examples/encoder-tiny.tm 2>&1 \
# RUN:   | FileCheck %s --check-prefix=FLAG

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
# CHECK: {{.*}}kv-cache-errors.tm:[[@LINE+5]]:14: error: unknown value 'fp16' for 'kv_cache'; expected one of f32, f16, bf16
# CHECK-NEXT: {{^}}  kv_cache = fp16
# CHECK-NEXT: {{^}}             ^~~~
# CHECK-NEXT: {{^}}             f16
# CHECK-NEXT: {{^}}note: did you mean 'f16'?
  kv_cache = fp16
  encoder {
    layers = 1
    heads = 4
# CHECK: {{.*}}kv-cache-errors.tm:[[@LINE+3]]:5: error: kv_cache applies to a decoder's layers: an encoder keeps no key/value cache
# CHECK-NEXT: {{^}}    kv_cache = f16
# CHECK: {{^}}note: set kv_cache in the decoder block or at model level
    kv_cache = f16
  }
  decoder {
    layers = 2
    heads = 4
# CHECK: {{.*}}kv-cache-errors.tm:[[@LINE+2]]:16: error: unknown value 'int8' for 'kv_cache'; expected one of f32, f16, bf16
# CHECK-NEXT: {{^}}    kv_cache = int8
    kv_cache = int8
# CHECK: {{.*}}kv-cache-errors.tm:[[@LINE+5]]:31: error: attention = linformer cannot be combined with kv_cache = bf16 yet
# CHECK-NEXT: {{^}}    layers 1..1 { attention = linformer(k = 8); mask = padding; kv_cache = bf16 }
# CHECK: {{^}}note: a linformer layer's caches stay f32: write kv_cache = f32 in this block
# CHECK-NEXT: {{.*}}kv-cache-errors.tm:[[@LINE+2]]:65: note: kv_cache set here
# CHECK-NOT: error:
    layers 1..1 { attention = linformer(k = 8); mask = padding; kv_cache = bf16 }
  }
}

# ENCODER: kv-cache-encoder.tm:5:3: warning: kv_cache has no effect without a decoder
# ENCODER: note: an encoder attends to its whole input at once and keeps no key/value cache
# ENCODER: model 'e' is valid
# ENCODER: KV-cache bytes  0 (f32, max_seq = 64)
# FLAG: encoder-tiny.tm: warning: --kv-cache has no effect without a decoder: an encoder keeps no key/value cache
# FLAG: model 'encoder_tiny' is valid
# FLAG: KV-cache bytes  0 (f32,
