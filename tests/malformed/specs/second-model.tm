# Two models in one file.
# RUN: %expect 1 'second-model.tm:10:1: error: a file holds exactly one model; found a second' -- %tmc check %s
model m {
  vocab = 100
  d_model = 64
  max_seq = 64
  encoder { layers = 1
            heads = 4 }
}
model n { vocab = 1 }
