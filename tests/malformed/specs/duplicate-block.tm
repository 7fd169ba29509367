# Two encoder blocks.
# RUN: %expect 1 'duplicate-block.tm:9:3: error: duplicate .encoder. block' -- %tmc check %s
model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  encoder { layers = 1
            heads = 4 }
  encoder { layers = 1
            heads = 4 }
}
