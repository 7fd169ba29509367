# A letter inside a number.
# RUN: %expect 1 'letter-in-number.tm:8:23: error: invalid character .x. in number .12x.' -- %tmc check %s
model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  encoder { layers = 1
            heads = 12x }
}
