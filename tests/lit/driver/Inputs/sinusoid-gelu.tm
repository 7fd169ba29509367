# Sinusoidal positions (added in the embedding kernel) and tanh-form gelu.
model sinusoid_gelu {
  vocab = 64
  d_model = 48
  max_seq = 32
  position = sinusoidal
  encoder { layers = 1; heads = 2; d_ff = 80; ffn = gelu_tanh }
}
