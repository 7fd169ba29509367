// `precision` (f32, bf16, int8, q4) on tm.linear survives every pass that
// rebuilds the op, and fuse-projections stacks only linears that multiply
// alike: a bf16, int8 or q4 GEMM over an f32 linear's weights would change
// how that linear computes.
// RUN: tmc-opt --split-input-file --tm-fuse-projections %s | FileCheck %s --check-prefix=PROJ
// RUN: tmc-opt --split-input-file --tm-fuse-projections=explain=true %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: tmc-opt --split-input-file --tm-fuse-linear-activation %s | FileCheck %s --check-prefix=ACT
// RUN: tmc-opt --split-input-file --tm-fuse-linear-residual %s | FileCheck %s --check-prefix=RES

// q and k are bf16, v f32: q and k fuse into one bf16 GEMM, v stays alone.
// PROJ-LABEL: func.func @mixed_qkv
// PROJ: %[[W:.*]] = tm.concat %{{.*}}, %{{.*}} : (tensor<16x16xf32>, tensor<8x16xf32>) -> tensor<24x16xf32>
// PROJ-NEXT: %[[QK:.*]] = tm.linear %arg0, %[[W]] {activation = "none", precision = "bf16"} : (tensor<?x16xf32>, tensor<24x16xf32>) -> tensor<?x24xf32>
// PROJ-NEXT: tm.split %[[QK]] : tensor<?x24xf32> -> tensor<?x16xf32>, tensor<?x8xf32>
// PROJ: tm.linear %arg0, %{{.*}} {activation = "none"} : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
// PROJ-NOT: tm.linear
// PROJ: tm.attention
// EXPLAIN-DAG: model.tm:7:5: remark: [layer.self_attn.v] not fused with the other linears of its input: its epilogue and precision (none, no bias, f32) differ from theirs
// EXPLAIN-DAG: model.tm:7:5: remark: [layer.self_attn.q+k] fused 2 linears that read the same input into one GEMM of 24 outputs
func.func @mixed_qkv(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %wq = tm.weight "q.weight" : tensor<16x16xf32>
  %wk = tm.weight "k.weight" : tensor<8x16xf32>
  %wv = tm.weight "v.weight" : tensor<8x16xf32>
  %q = tm.linear %x, %wq {activation = "none", precision = "bf16"} : (tensor<?x16xf32>, tensor<16x16xf32>) -> tensor<?x16xf32> loc(#q)
  %k = tm.linear %x, %wk {activation = "none", precision = "bf16"} : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32> loc(#k)
  %v = tm.linear %x, %wv {activation = "none"} : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32> loc(#v)
  %a = tm.attention %q, %k, %v {heads = 4 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<causal = true>} : (tensor<?x16xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
  return %a : tensor<?x16xf32>
}
#spec = loc("model.tm":7:5)
#q = loc("layer.self_attn.q"(#spec))
#k = loc("layer.self_attn.k"(#spec))
#v = loc("layer.self_attn.v"(#spec))

// -----

// An explicit "f32" is the absent attribute's value: the two fuse, and the
// fused GEMM is f32.
// PROJ-LABEL: func.func @explicit_f32
// PROJ: tm.linear %arg0, %{{.*}} {activation = "none"{{(, precision = "f32")?}}} : (tensor<?x8xf32>, tensor<48x8xf32>) -> tensor<?x48xf32>
// PROJ-NOT: tm.linear %arg0
func.func @explicit_f32(%x: tensor<?x8xf32>) -> tensor<?x24xf32> {
  %wg = tm.weight "gate.weight" : tensor<24x8xf32>
  %wu = tm.weight "up.weight" : tensor<24x8xf32>
  %g = tm.linear %x, %wg {activation = "none", precision = "f32"} : (tensor<?x8xf32>, tensor<24x8xf32>) -> tensor<?x24xf32>
  %u = tm.linear %x, %wu {activation = "none"} : (tensor<?x8xf32>, tensor<24x8xf32>) -> tensor<?x24xf32>
  %h = tm.gated_activation %g, %u {kind = "silu"} : tensor<?x24xf32>
  return %h : tensor<?x24xf32>
}

// -----

// The activation folded into a bf16 linear keeps it bf16; the f32 one stays
// f32.
// ACT-LABEL: func.func @epilogues
// ACT: tm.linear %arg0, %{{.*}} {activation = "gelu", precision = "bf16"} : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
// ACT: tm.linear %arg0, %{{.*}} {activation = "relu"} : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
// ACT-NOT: tm.activation
// The residual add folded into a bf16 projection keeps it bf16. The two
// linears of %x differ in precision (and epilogue): never one GEMM.
// PROJ-LABEL: func.func @epilogues
// PROJ-NOT: tm.concat
// RES-LABEL: func.func @epilogues
// RES: tm.linear %{{.*}}, %{{.*}} residual %arg0 {activation = "none", precision = "bf16"} : (tensor<?x32xf32>, tensor<8x32xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// RES-NOT: tm.add
func.func @epilogues(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x32xf32>) {
  %w1 = tm.weight "up.weight" : tensor<32x8xf32>
  %w2 = tm.weight "down.weight" : tensor<8x32xf32>
  %w3 = tm.weight "other.weight" : tensor<32x8xf32>
  %h = tm.linear %x, %w1 {activation = "none", precision = "bf16"} : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
  %a = tm.activation %h {kind = "gelu"} : tensor<?x32xf32>
  %y = tm.linear %a, %w2 {activation = "none", precision = "bf16"} : (tensor<?x32xf32>, tensor<8x32xf32>) -> tensor<?x8xf32>
  %s = tm.add %x, %y : tensor<?x8xf32>
  %o = tm.linear %x, %w3 {activation = "none"} : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
  %r = tm.activation %o {kind = "relu"} : tensor<?x32xf32>
  return %s, %r : tensor<?x8xf32>, tensor<?x32xf32>
}

// -----

// int8 the same way: q and k (int8) fuse into one int8 GEMM, v (bf16) and
// the gate (f32) of the same input stay alone, each in its own precision.
// PROJ-LABEL: func.func @three_precisions
// PROJ: %[[W8:.*]] = tm.concat %{{.*}}, %{{.*}} : (tensor<16x16xf32>, tensor<8x16xf32>) -> tensor<24x16xf32>
// PROJ-NEXT: %[[QK8:.*]] = tm.linear %arg0, %[[W8]] {activation = "none", precision = "int8"} : (tensor<?x16xf32>, tensor<24x16xf32>) -> tensor<?x24xf32>
// PROJ-NEXT: tm.split %[[QK8]] : tensor<?x24xf32> -> tensor<?x16xf32>, tensor<?x8xf32>
// PROJ-DAG: tm.linear %arg0, %{{.*}} {activation = "none", precision = "bf16"} : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32>
// PROJ-DAG: tm.linear %arg0, %{{.*}} {activation = "none"} : (tensor<?x16xf32>, tensor<16x16xf32>) -> tensor<?x16xf32>
// PROJ-NOT: tm.concat
// PROJ: return
// EXPLAIN-DAG: model.tm:9:5: remark: [layer.self_attn.v] not fused with the other linears of its input: its epilogue and precision (none, no bias, bf16) differ from theirs
// EXPLAIN-DAG: model.tm:9:5: remark: [layer.ffn.gate] not fused with the other linears of its input: its epilogue and precision (none, no bias, f32) differ from theirs
// EXPLAIN-DAG: model.tm:9:5: remark: [layer.self_attn.q+k] fused 2 linears that read the same input into one GEMM of 24 outputs
func.func @three_precisions(%x: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %wq = tm.weight "q.weight" : tensor<16x16xf32>
  %wk = tm.weight "k.weight" : tensor<8x16xf32>
  %wv = tm.weight "v.weight" : tensor<8x16xf32>
  %wg = tm.weight "gate.weight" : tensor<16x16xf32>
  %q = tm.linear %x, %wq {activation = "none", precision = "int8"} : (tensor<?x16xf32>, tensor<16x16xf32>) -> tensor<?x16xf32> loc(#q)
  %k = tm.linear %x, %wk {activation = "none", precision = "int8"} : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32> loc(#k)
  %v = tm.linear %x, %wv {activation = "none", precision = "bf16"} : (tensor<?x16xf32>, tensor<8x16xf32>) -> tensor<?x8xf32> loc(#v)
  %g = tm.linear %x, %wg {activation = "none"} : (tensor<?x16xf32>, tensor<16x16xf32>) -> tensor<?x16xf32> loc(#g)
  %a = tm.attention %q, %k, %v {heads = 4 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<causal = true>} : (tensor<?x16xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
  %s = tm.add %a, %g : tensor<?x16xf32>
  return %s : tensor<?x16xf32>
}
#spec = loc("model.tm":9:5)
#q = loc("layer.self_attn.q"(#spec))
#k = loc("layer.self_attn.k"(#spec))
#v = loc("layer.self_attn.v"(#spec))
#g = loc("layer.ffn.gate"(#spec))

// -----

// The epilogue folds keep int8: the activation folded into an int8 linear,
// the residual add folded into an int8 projection.
// ACT-LABEL: func.func @int8_epilogues
// ACT: tm.linear %arg0, %{{.*}} {activation = "silu", precision = "int8"} : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
// ACT-NOT: tm.activation
// RES-LABEL: func.func @int8_epilogues
// RES: tm.linear %{{.*}}, %{{.*}} residual %arg0 {activation = "none", precision = "int8"} : (tensor<?x32xf32>, tensor<8x32xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// RES-NOT: tm.add
func.func @int8_epilogues(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w1 = tm.weight "up.weight" : tensor<32x8xf32>
  %w2 = tm.weight "down.weight" : tensor<8x32xf32>
  %h = tm.linear %x, %w1 {activation = "none", precision = "int8"} : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
  %a = tm.activation %h {kind = "silu"} : tensor<?x32xf32>
  %y = tm.linear %a, %w2 {activation = "none", precision = "int8"} : (tensor<?x32xf32>, tensor<8x32xf32>) -> tensor<?x8xf32>
  %s = tm.add %x, %y : tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}

// -----

// q4 the same way: q and k (q4) fuse into one q4 GEMM (its block scales
// belong to output channels, so stacking rows changes none); v (int8) and
// the gate (f32) of the same input stay alone, each in its own precision.
// PROJ-LABEL: func.func @q4_beside_int8
// PROJ: %[[W4:.*]] = tm.concat %{{.*}}, %{{.*}} : (tensor<16x40xf32>, tensor<8x40xf32>) -> tensor<24x40xf32>
// PROJ-NEXT: %[[QK4:.*]] = tm.linear %arg0, %[[W4]] {activation = "none", precision = "q4"} : (tensor<?x40xf32>, tensor<24x40xf32>) -> tensor<?x24xf32>
// PROJ-NEXT: tm.split %[[QK4]] : tensor<?x24xf32> -> tensor<?x16xf32>, tensor<?x8xf32>
// PROJ-DAG: tm.linear %arg0, %{{.*}} {activation = "none", precision = "int8"} : (tensor<?x40xf32>, tensor<8x40xf32>) -> tensor<?x8xf32>
// PROJ-DAG: tm.linear %arg0, %{{.*}} {activation = "none"} : (tensor<?x40xf32>, tensor<16x40xf32>) -> tensor<?x16xf32>
// PROJ-NOT: tm.concat
// PROJ: return
// EXPLAIN-DAG: model.tm:11:5: remark: [layer.self_attn.v] not fused with the other linears of its input: its epilogue and precision (none, no bias, int8) differ from theirs
// EXPLAIN-DAG: model.tm:11:5: remark: [layer.ffn.gate] not fused with the other linears of its input: its epilogue and precision (none, no bias, f32) differ from theirs
// EXPLAIN-DAG: model.tm:11:5: remark: [layer.self_attn.q+k] fused 2 linears that read the same input into one GEMM of 24 outputs
func.func @q4_beside_int8(%x: tensor<?x40xf32>) -> tensor<?x16xf32> {
  %wq = tm.weight "q.weight" : tensor<16x40xf32>
  %wk = tm.weight "k.weight" : tensor<8x40xf32>
  %wv = tm.weight "v.weight" : tensor<8x40xf32>
  %wg = tm.weight "gate.weight" : tensor<16x40xf32>
  %q = tm.linear %x, %wq {activation = "none", precision = "q4"} : (tensor<?x40xf32>, tensor<16x40xf32>) -> tensor<?x16xf32> loc(#q)
  %k = tm.linear %x, %wk {activation = "none", precision = "q4"} : (tensor<?x40xf32>, tensor<8x40xf32>) -> tensor<?x8xf32> loc(#k)
  %v = tm.linear %x, %wv {activation = "none", precision = "int8"} : (tensor<?x40xf32>, tensor<8x40xf32>) -> tensor<?x8xf32> loc(#v)
  %g = tm.linear %x, %wg {activation = "none"} : (tensor<?x40xf32>, tensor<16x40xf32>) -> tensor<?x16xf32> loc(#g)
  %a = tm.attention %q, %k, %v {heads = 4 : i64, kv_heads = 2 : i64, head_dim = 4 : i64, scale = 0.5 : f64, mask = #tm.mask<causal = true>} : (tensor<?x16xf32>, tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x16xf32>
  %s = tm.add %a, %g : tensor<?x16xf32>
  return %s : tensor<?x16xf32>
}
#spec = loc("model.tm":11:5)
#q = loc("layer.self_attn.q"(#spec))
#k = loc("layer.self_attn.k"(#spec))
#v = loc("layer.self_attn.v"(#spec))
#g = loc("layer.ffn.gate"(#spec))

// -----

// The epilogue folds keep q4: the activation folded into a q4 linear, the
// residual add folded into a q4 projection.
// ACT-LABEL: func.func @q4_epilogues
// ACT: tm.linear %arg0, %{{.*}} {activation = "gelu_tanh", precision = "q4"} : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
// ACT-NOT: tm.activation
// RES-LABEL: func.func @q4_epilogues
// RES: tm.linear %{{.*}}, %{{.*}} residual %arg0 {activation = "none", precision = "q4"} : (tensor<?x32xf32>, tensor<8x32xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// RES-NOT: tm.add
func.func @q4_epilogues(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w1 = tm.weight "up.weight" : tensor<32x8xf32>
  %w2 = tm.weight "down.weight" : tensor<8x32xf32>
  %h = tm.linear %x, %w1 {activation = "none", precision = "q4"} : (tensor<?x8xf32>, tensor<32x8xf32>) -> tensor<?x32xf32>
  %a = tm.activation %h {kind = "gelu_tanh"} : tensor<?x32xf32>
  %y = tm.linear %a, %w2 {activation = "none", precision = "q4"} : (tensor<?x32xf32>, tensor<8x32xf32>) -> tensor<?x8xf32>
  %s = tm.add %x, %y : tensor<?x8xf32>
  return %s : tensor<?x8xf32>
}
