# A model needs an encoder or a decoder.
# RUN: not %tmc check %s 2>&1 | FileCheck %s

# CHECK: {{.*}}no-stack.tm:[[@LINE+1]]:1: error: model 'm' has no encoder or decoder block
model m {
  vocab = 100
  d_model = 64
  max_seq = 64
}
