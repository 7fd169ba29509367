# A name where a number belongs.
# RUN: %expect 1 'name-for-number.tm:7:27: error: expected a number for .theta., found a name' -- %tmc check %s
model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  position = rope(theta = big)
  encoder { layers = 1
            heads = 4 }
}
