// RUN: tmc-opt --split-input-file --tm-fuse-projections %s | FileCheck %s
// RUN: tmc-opt --split-input-file --tm-fuse-projections=explain=true %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: tmc-opt --split-input-file --tm-fuse-projections --mlir-print-debuginfo %s | FileCheck %s --check-prefix=LOC
// LINEARS counts each function's tm.linear ops, the GEMMs left after fusion:
// a projection left unfused next to the fused one is an extra linear, even
// between the weights, where CHECK's CHECK-DAGs leave gaps no CHECK-NOT
// covers (mutants/ proves it).
// RUN: tmc-opt --split-input-file --tm-fuse-projections %s | FileCheck %s --check-prefix=LINEARS

// GQA attention: q is 16 wide, k and v 8; one GEMM of 32 outputs, its
// weights and biases stacked, its result split back in order. The k weight
// is defined after the q projection: it moves up to where the stack is built.
// EXPLAIN: model.tm:7:5: remark: [layer.self_attn.q+k+v] fused 3 linears that read the same input into one GEMM of 32 outputs
// CHECK-LABEL: func.func @qkv_gqa
// CHECK-SAME: (%[[X:.*]]: tensor<?x16xf32>)
// CHECK-DAG: %[[WQ:.*]] = tm.weight "q.weight"
// CHECK-DAG: %[[WK:.*]] = tm.weight "k.weight"
// CHECK-DAG: %[[WV:.*]] = tm.weight "v.weight"
// CHECK-DAG: %[[BQ:.*]] = tm.weight "q.bias"
// CHECK-DAG: %[[BK:.*]] = tm.weight "k.bias"
// CHECK-DAG: %[[BV:.*]] = tm.weight "v.bias"
// CHECK-NOT: tm.linear
// CHECK: %[[W:.*]] = tm.concat %[[WQ]], %[[WK]], %[[WV]] : (tensor<16x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<32x16xf32>
// CHECK: %[[B:.*]] = tm.concat %[[BQ]], %[[BK]], %[[BV]] : (tensor<16xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<32xf32>
// CHECK: %[[QKV:.*]] = tm.linear %[[X]], %[[W]], %[[B]] {activation = "none"} : (tensor<?x16xf32>, tensor<32x16xf32>, tensor<32xf32>) -> tensor<?x32xf32>
// CHECK: %[[S:.*]]:3 = tm.split %[[QKV]] : tensor<?x32xf32> -> tensor<?x16xf32>, tensor<?x8xf32>, tensor<?x8xf32>
// CHECK-NOT: tm.linear
// CHECK: %[[A:.*]] = tm.attention %[[S]]#0, %[[S]]#1, %[[S]]#2
// CHECK-NOT: tm.linear
// CHECK: return %[[A]]
// LINEARS-LABEL: func.func @qkv_gqa
// LINEARS-COUNT-1: tm.linear
// LINEARS-NOT: tm.linear
// LOC-LABEL: func.func @qkv_gqa
// LOC: tm.linear {{.*}} loc(#[[FUSED:loc[0-9]*]])
// LOC: tm.split {{.*}} loc(#[[PARTS:loc[0-9]*]])
// LOC-DAG: #[[FUSED]] = loc("layer.self_attn.q+k+v"(
// LOC-DAG: #[[PARTS]] = loc(fused<"tm.split">[#{{.*}}, #{{.*}}, #{{.*}}])
func.func @qkv_gqa(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %wq = tm.weight "q.weight" : tensor<16x16xf32>
  %bq = tm.weight "q.bias" : tensor<16xf32>
  %q = tm.linear %x, %wq, %bq {activation = "none"} : (tensor<?x16xf32>, tensor<16x16xf32>, tensor<16xf32>) -> tensor<?x16xf32> loc(#q)
  %wk = tm.weight "k.weight" : tensor<8x16xf32>
  %bk = tm.weight "k.bias" : tensor<8xf32>
  %k = tm.linear %x, %wk, %bk {activation = "none"} : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32> loc(#k)
  %wv = tm.weight "v.weight" : tensor<8x16xf32>
  %bv = tm.weight "v.bias" : tensor<8xf32>
  %v = tm.linear %x, %wv, %bv {activation = "none"} : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32> loc(#v)
  %a = tm.attention %q, %k, %v {heads = 4 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<causal = true>} : (tensor<?x16xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
  return %a : tensor<?x16xf32>
}
#spec = loc("model.tm":7:5)
#q = loc("layer.self_attn.q"(#spec))
#k = loc("layer.self_attn.k"(#spec))
#v = loc("layer.self_attn.v"(#spec))

// -----

// A gated FFN's gate and up (no bias) fuse; down reads another input.
// EXPLAIN: model.tm:9:3: remark: [ffn.gate+up] fused 2 linears
// CHECK-LABEL: func.func @gate_up
// CHECK-NOT: tm.linear
// CHECK: %[[W:.*]] = tm.concat %{{.*}}, %{{.*}} : (tensor<24x8xf32>, tensor<24x8xf32>) -> tensor<48x8xf32>
// CHECK-NEXT: %[[GU:.*]] = tm.linear %arg0, %[[W]] {activation = "none"} : (tensor<?x8xf32>, tensor<48x8xf32>) -> tensor<?x48xf32>
// CHECK-NEXT: %[[S:.*]]:2 = tm.split %[[GU]] : tensor<?x48xf32> -> tensor<?x24xf32>, tensor<?x24xf32>
// CHECK-NEXT: %[[H:.*]] = tm.gated_activation %[[S]]#0, %[[S]]#1
// CHECK-NEXT: %[[Y:.*]] = tm.linear %[[H]], %{{.*}} : (tensor<?x24xf32>, tensor<8x24xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: return %[[Y]]
// LINEARS-LABEL: func.func @gate_up
// LINEARS-COUNT-2: tm.linear
// LINEARS-NOT: tm.linear
func.func @gate_up(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %wg = tm.weight "gate.weight" : tensor<24x8xf32>
  %wu = tm.weight "up.weight" : tensor<24x8xf32>
  %wd = tm.weight "down.weight" : tensor<8x24xf32>
  %g = tm.linear %x, %wg {activation = "none"} : (tensor<?x8xf32>, tensor<24x8xf32>) -> tensor<?x24xf32> loc(#gate)
  %u = tm.linear %x, %wu {activation = "none"} : (tensor<?x8xf32>, tensor<24x8xf32>) -> tensor<?x24xf32> loc(#up)
  %h = tm.gated_activation %g, %u {kind = "silu"} : tensor<?x24xf32>
  %y = tm.linear %h, %wd {activation = "none"} : (tensor<?x24xf32>, tensor<8x24xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
#gate = loc("ffn.gate"("model.tm":9:3))
#up = loc("ffn.up"("model.tm":9:3))

// -----

// Linears of one input that disagree on their epilogue fuse only with
// their like; one with a residual, and one the function returns, stay alone.
// CHECK-LABEL: func.func @declined
// CHECK: tm.concat
// CHECK-SAME: -> tensor<16x8xf32>
// CHECK: tm.linear %arg0, %{{.*}} {activation = "relu"} : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK: tm.split
// CHECK: tm.linear %arg0, %{{.*}} {activation = "none"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
// CHECK: tm.linear %arg0, %{{.*}} residual %arg1
// CHECK: tm.linear %arg0, %{{.*}} {activation = "relu"} : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
// LINEARS-LABEL: func.func @declined
// LINEARS-COUNT-4: tm.linear
// LINEARS-NOT: tm.linear
// EXPLAIN-DAG: :8: remark: not fused with the other linears of its input: the function returns its result
// EXPLAIN-DAG: :8: remark: not fused with the other linears of its input: it adds a residual
// EXPLAIN-DAG: :8: remark: not fused with the other linears of its input: its epilogue (relu, bias) differs from theirs
// EXPLAIN-DAG: :8: remark: fused 2 linears that read the same input into one GEMM of 16 outputs
func.func @declined(%x: tensor<?x8xf32>, %r: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>) {
  %w = tm.weight "w" : tensor<8x8xf32>
  %b = tm.weight "b" : tensor<4xf32>
  %w4 = tm.weight "w4" : tensor<4x8xf32>
  // Two relu linears without bias: these two fuse.
  %a = tm.linear %x, %w {activation = "relu"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %c = tm.linear %x, %w {activation = "relu"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  // Returned as it is.
  %d = tm.linear %x, %w {activation = "none"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  // A residual.
  %e = tm.linear %x, %w residual %r {activation = "none"} : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // Relu with a bias: like no other.
  %f = tm.linear %x, %w4, %b {activation = "relu"} : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %s = tm.add %a, %c : tensor<?x8xf32>
  %t = tm.add %e, %e : tensor<?x8xf32>
  %u = tm.add %f, %f : tensor<?x4xf32>
  return %s, %d, %t, %u : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x4xf32>
}

// -----

// A single linear per input: nothing to do.
// CHECK-LABEL: func.func @alone
// CHECK-NOT: tm.concat
// CHECK-NOT: tm.split
// LINEARS-LABEL: func.func @alone
// LINEARS-COUNT-2: tm.linear
// LINEARS-NOT: tm.linear
func.func @alone(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = tm.weight "w" : tensor<8x8xf32>
  %y = tm.linear %x, %w {activation = "none"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %z = tm.linear %y, %w {activation = "none"} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  return %z : tensor<?x8xf32>
}
