# Sizes are bounded so that no count `tmc check` reports can overflow: a
# layer count past 4096 and a model whose parameter count exceeds 64 bits are
# errors.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s
# RUN: not %tmc check %S/Inputs/huge.tm 2>&1 | FileCheck %s --check-prefix=HUGE

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  encoder {
# CHECK: {{.*}}too-large.tm:[[@LINE+1]]:14: error: 'layers' must be at most 4096, found 100000
    layers = 100000
    heads = 4
  }
}
# HUGE: huge.tm:2:1: error: model 'huge' is too large: the parameter count does not fit in 64 bits
# HUGE-NEXT: model huge {
# HUGE: note: reduce layers, d_model, d_ff, vocab or max_seq
