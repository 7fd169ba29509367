# The same window kind twice in one mask.
# RUN: %expect 1 'mask-term-twice.tm:10:39: error: a mask takes one .sliding_window. term' -- %tmc check %s
model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  encoder {
    layers = 1
    heads = 4
    mask = sliding_window(size = 4) + sliding_window(size = 8)
  }
}
