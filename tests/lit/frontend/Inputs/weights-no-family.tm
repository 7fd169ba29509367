model m {
 vocab = 1
 d_model = 4
 max_seq = 4
 weights = huggingface()
 decoder {
 layers = 1
 heads = 1
 }
}
