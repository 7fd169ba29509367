# --emit=ast prints the syntax tree, one node per line with its line:col.
# RUN: %tmc compile --emit=ast %s | FileCheck --strict-whitespace %s

# CHECK:{{^}}Model tiny @[[@LINE+1]]:1
model tiny {
# CHECK-NEXT:{{^}}  Assignment vocab @[[@LINE+2]]:3
# CHECK-NEXT:{{^}}    Int 100 @[[@LINE+1]]:11
  vocab = 100
# CHECK-NEXT:{{^}}  Assignment d_model @[[@LINE+2]]:3
# CHECK-NEXT:{{^}}    Int 32 @[[@LINE+1]]:13
  d_model = 32
# CHECK-NEXT:{{^}}  Assignment max_seq @[[@LINE+2]]:3
# CHECK-NEXT:{{^}}    Int 16 @[[@LINE+1]]:13
  max_seq = 16
# CHECK-NEXT:{{^}}  Assignment embed_scale @[[@LINE+2]]:3
# CHECK-NEXT:{{^}}    Bool true @[[@LINE+1]]:17
  embed_scale = true
# CHECK-NEXT:{{^}}  Stack encoder @[[@LINE+1]]:3
  encoder {
# CHECK-NEXT:{{^}}    Assignment layers @[[@LINE+2]]:5
# CHECK-NEXT:{{^}}      Int 1 @[[@LINE+1]]:14
    layers = 1
# CHECK-NEXT:{{^}}    Assignment heads @[[@LINE+2]]:5
# CHECK-NEXT:{{^}}      Int 2 @[[@LINE+1]]:13
    heads = 2
# CHECK-NEXT:{{^}}    Assignment ffn @[[@LINE+2]]:5
# CHECK-NEXT:{{^}}      Name relu @[[@LINE+1]]:11
    ffn = relu
# CHECK-NEXT:{{^}}    Assignment norm @[[@LINE+6]]:5
# CHECK-NEXT:{{^}}      Call post @[[@LINE+5]]:12
# CHECK-NEXT:{{^}}        Argument (positional) @[[@LINE+4]]:17
# CHECK-NEXT:{{^}}          Call layernorm @[[@LINE+3]]:17
# CHECK-NEXT:{{^}}            Argument eps @[[@LINE+2]]:27
# CHECK-NEXT:{{^}}              Float 1e-6 @[[@LINE+1]]:33
    norm = post(layernorm(eps = 1e-6))
  }
}
