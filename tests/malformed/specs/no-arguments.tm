# A value that takes no arguments, given one.
# RUN: %expect 1 'no-arguments.tm:7:22: error: unknown argument .size. for .learned.; it takes no arguments' -- %tmc check %s
model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  position = learned(size = 3)
  encoder { layers = 1
            heads = 4 }
}
