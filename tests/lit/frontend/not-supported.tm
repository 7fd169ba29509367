# The whole language of the contract checks; the one optional extension tmc
# does not implement, block_sparse masks, is recognized and reported as such,
# apart from real mistakes.
# RUN: not %tmc check %s 2>&1 | FileCheck --strict-whitespace %s

model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  output = lm_head(tied = false, bias = true)
  dtype = f16
  encoder {
    layers = 4
    heads = 4
# CHECK: {{.*}}not-supported.tm:[[@LINE+4]]:12: error: mask = block_sparse is not supported yet by this version of tmc
# CHECK-NEXT: {{^}}    mask = block_sparse(block = 16)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~
# CHECK-NEXT: {{^}}note: sliding_window, dilated_window, global and random are available
    mask = block_sparse(block = 16)
    attention = full
    layers 0..1 { ffn = gelu }
  }
  decoder {
    layers = 1
    heads = 1
  }
}
# CHECK-NOT: error
