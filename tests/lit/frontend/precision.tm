# `precision` at its three levels: the model's (here bf16) is the default of
# the encoder, which sets none, and the LM head's; the decoder's own f32 wins
# over it, and layer 1's bf16 over the decoder's. --precision replaces the
# model-level value only: the encoder and the head follow it, the decoder's
# and layer 1's own keys still win. Every linear is pinned, @encode's
# cross-attention k/v (which take their decoder layer's precision) too.
# RUN: %tmc compile %s --emit=tm | FileCheck %s --check-prefix=TM
# RUN: %tmc compile %s --emit=tm --precision=f32 | FileCheck %s --check-prefix=F32
# RUN: %tmc compile %s --emit=tm --precision bf16 | FileCheck %s --check-prefix=TM
# The kernels: bf16 GEMMs are kernels of their own, named ..._bf16; the
# cross-attention k/v of layers 0 and 2 fuse into one f32 GEMM of 64
# outputs, layer 1's into a bf16 one of 32 (never one GEMM of both).
# RUN: %tmc compile %s --emit=kernels | FileCheck %s --check-prefix=KERNELS
# tmc check says what the linears compute in, and which layers are bf16.
# RUN: %tmc check %s | FileCheck %s --check-prefix=CHECK-TEXT
# RUN: %tmc check %s --precision=f32 | FileCheck %s --check-prefix=CHECK-F32
# RUN: %tmc check --json %s | FileCheck %s --check-prefix=JSON
# RUN: %tmc check --json --precision=f32 %s | FileCheck %s --check-prefix=JSON-F32
# --precision=int8 makes the encoder and the head int8; the decoder keeps
# its f32, layer 1 its bf16: all three precisions in one model.
# RUN: %tmc compile %s --emit=tm --precision=int8 | FileCheck %s --check-prefix=INT8
# RUN: %tmc compile %s --emit=kernels --precision int8 | FileCheck %s --check-prefix=KERNELS-INT8
# RUN: %tmc check %s --precision=int8 | FileCheck %s --check-prefix=CHECK-INT8
# RUN: %tmc check --json %s --precision=int8 | FileCheck %s --check-prefix=JSON-INT8
# --precision=q4 likewise: the encoder and the head q4, the decoder's own
# f32 and layer 1's bf16 kept.
# RUN: %tmc compile %s --emit=tm --precision=q4 | FileCheck %s --check-prefix=Q4
# RUN: %tmc compile %s --emit=kernels --precision q4 | FileCheck %s --check-prefix=KERNELS-Q4
# RUN: %tmc check %s --precision=q4 | FileCheck %s --check-prefix=CHECK-Q4
# RUN: %tmc check --json %s --precision=q4 | FileCheck %s --check-prefix=JSON-Q4

model mixed {
  vocab = 40
  d_model = 16
  max_seq = 8
  output = lm_head(tied = false)
  precision = bf16
  encoder {
    layers = 1
    heads = 2
    d_ff = 32
    bias = false
  }
  decoder {
    layers = 3
    heads = 2
    d_ff = 32
    bias = false
    precision = f32
    layers 1..1 { precision = bf16 }
  }
}

# TM-LABEL: func.func @encode
# TM: tm.weight "encoder.layers.0.self_attn.q.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "encoder.layers.0.self_attn.k.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "encoder.layers.0.self_attn.v.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "encoder.layers.0.self_attn.o.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "encoder.layers.0.ffn.up.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "encoder.layers.0.ffn.down.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "decoder.layers.0.cross_attn.k.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.0.cross_attn.v.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.1.cross_attn.k.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "decoder.layers.1.cross_attn.v.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "decoder.layers.2.cross_attn.k.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.2.cross_attn.v.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM-LABEL: func.func @forward
# TM: tm.weight "decoder.layers.0.self_attn.q.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.0.self_attn.k.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.0.self_attn.v.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.0.self_attn.o.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.0.cross_attn.q.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.0.cross_attn.o.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.0.ffn.up.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.0.ffn.down.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.1.self_attn.q.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "decoder.layers.1.self_attn.k.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "decoder.layers.1.self_attn.v.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "decoder.layers.1.self_attn.o.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "decoder.layers.1.cross_attn.q.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "decoder.layers.1.cross_attn.o.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "decoder.layers.1.ffn.up.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "decoder.layers.1.ffn.down.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# TM: tm.weight "decoder.layers.2.self_attn.q.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.2.self_attn.k.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.2.self_attn.v.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.2.self_attn.o.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.2.cross_attn.q.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.2.cross_attn.o.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.2.ffn.up.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "decoder.layers.2.ffn.down.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none"} :
# TM: tm.weight "output.weight"
# TM-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}

# F32-LABEL: func.func @encode
# F32: tm.weight "encoder.layers.0.self_attn.q.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "encoder.layers.0.self_attn.k.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "encoder.layers.0.self_attn.v.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "encoder.layers.0.self_attn.o.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "encoder.layers.0.ffn.up.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "encoder.layers.0.ffn.down.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.0.cross_attn.k.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.0.cross_attn.v.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.1.cross_attn.k.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# F32: tm.weight "decoder.layers.1.cross_attn.v.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# F32: tm.weight "decoder.layers.2.cross_attn.k.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.2.cross_attn.v.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32-LABEL: func.func @forward
# F32: tm.weight "decoder.layers.0.self_attn.q.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.0.self_attn.k.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.0.self_attn.v.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.0.self_attn.o.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.0.cross_attn.q.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.0.cross_attn.o.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.0.ffn.up.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.0.ffn.down.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.1.self_attn.q.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# F32: tm.weight "decoder.layers.1.self_attn.k.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# F32: tm.weight "decoder.layers.1.self_attn.v.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# F32: tm.weight "decoder.layers.1.self_attn.o.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# F32: tm.weight "decoder.layers.1.cross_attn.q.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# F32: tm.weight "decoder.layers.1.cross_attn.o.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# F32: tm.weight "decoder.layers.1.ffn.up.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# F32: tm.weight "decoder.layers.1.ffn.down.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# F32: tm.weight "decoder.layers.2.self_attn.q.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.2.self_attn.k.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.2.self_attn.v.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.2.self_attn.o.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.2.cross_attn.q.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.2.cross_attn.o.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.2.ffn.up.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "decoder.layers.2.ffn.down.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :
# F32: tm.weight "output.weight"
# F32-NEXT: tm.linear {{.*}} {activation = "none"} :

# The encoder's linears are int8 (q, k and v fused into one int8 GEMM of 48
# outputs), and so is the head; the cross-attention k/v GEMMs are as above.
# INT8-LABEL: func.func @encode
# INT8: tm.weight "encoder.layers.0.self_attn.q.weight"
# INT8-NEXT: tm.linear {{.*}} {activation = "none", precision = "int8"}
# INT8: tm.weight "encoder.layers.0.self_attn.k.weight"
# INT8-NEXT: tm.linear {{.*}} {activation = "none", precision = "int8"}
# INT8: tm.weight "encoder.layers.0.self_attn.v.weight"
# INT8-NEXT: tm.linear {{.*}} {activation = "none", precision = "int8"}
# INT8: tm.weight "encoder.layers.0.self_attn.o.weight"
# INT8-NEXT: tm.linear {{.*}} {activation = "none", precision = "int8"}
# INT8: tm.weight "encoder.layers.0.ffn.up.weight"
# INT8-NEXT: tm.linear {{.*}} {activation = "none", precision = "int8"}
# INT8: tm.weight "encoder.layers.0.ffn.down.weight"
# INT8-NEXT: tm.linear {{.*}} {activation = "none", precision = "int8"}
# INT8: tm.weight "decoder.layers.0.cross_attn.k.weight"
# INT8-NEXT: tm.linear {{.*}} {activation = "none"} :
# INT8: tm.weight "decoder.layers.1.cross_attn.k.weight"
# INT8-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# INT8: tm.weight "decoder.layers.2.cross_attn.v.weight"
# INT8-NEXT: tm.linear {{.*}} {activation = "none"} :
# INT8-LABEL: func.func @forward
# INT8-NOT: "int8"
# INT8: tm.weight "decoder.layers.0.self_attn.q.weight"
# INT8-NEXT: tm.linear {{.*}} {activation = "none"} :
# INT8-NOT: "int8"
# INT8: tm.weight "decoder.layers.1.ffn.down.weight"
# INT8-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# INT8-NOT: "int8"
# INT8: tm.weight "decoder.layers.2.ffn.down.weight"
# INT8-NEXT: tm.linear {{.*}} {activation = "none"} :
# INT8-NOT: "int8"
# INT8: tm.weight "output.weight"
# INT8-NEXT: tm.linear {{.*}} {activation = "none", precision = "int8"}

# KERNELS-INT8-DAG: k[[QKV:[0-9]+]] linear_k16_n48_none_int8 (
# KERNELS-INT8-DAG: k[[F32KV:[0-9]+]] linear_k16_n64_none (
# KERNELS-INT8-DAG: k[[BF16KV:[0-9]+]] linear_k16_n32_none_bf16 (
# KERNELS-INT8-DAG: k[[HEAD:[0-9]+]] linear_k16_n40_none_int8 (
# KERNELS-INT8-DAG: encode: k[[QKV]]({{.*}}) // tm.linear encoder.layers.0.self_attn.q+k+v
# KERNELS-INT8-DAG: encode: k[[F32KV]]({{.*}}) // tm.linear decoder.layers.0.cross_attn.k+0.cross_attn.v+2.cross_attn.k+2.cross_attn.v
# KERNELS-INT8-DAG: encode: k[[BF16KV]]({{.*}}) // tm.linear decoder.layers.1.cross_attn.k+v
# KERNELS-INT8-DAG: k[[HEAD]]({{.*}}) // tm.linear output

# The encoder's q, k and v fuse into one q4 GEMM of 48 outputs; the
# decoder's cross-attention k/v keep their f32 and bf16 GEMMs.
# Q4-LABEL: func.func @encode
# Q4: tm.weight "encoder.layers.0.self_attn.q.weight"
# Q4-NEXT: tm.linear {{.*}} {activation = "none", precision = "q4"}
# Q4: tm.weight "encoder.layers.0.self_attn.o.weight"
# Q4-NEXT: tm.linear {{.*}} {activation = "none", precision = "q4"}
# Q4: tm.weight "encoder.layers.0.ffn.down.weight"
# Q4-NEXT: tm.linear {{.*}} {activation = "none", precision = "q4"}
# Q4: tm.weight "decoder.layers.0.cross_attn.k.weight"
# Q4-NEXT: tm.linear {{.*}} {activation = "none"} :
# Q4: tm.weight "decoder.layers.1.cross_attn.k.weight"
# Q4-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# Q4-LABEL: func.func @forward
# Q4-NOT: "q4"
# Q4: tm.weight "decoder.layers.1.ffn.down.weight"
# Q4-NEXT: tm.linear {{.*}} {activation = "none", precision = "bf16"}
# Q4-NOT: "q4"
# Q4: tm.weight "output.weight"
# Q4-NEXT: tm.linear {{.*}} {activation = "none", precision = "q4"}

# KERNELS-Q4-DAG: k[[QKV:[0-9]+]] linear_k16_n48_none_q4 (
# KERNELS-Q4-DAG: k[[F32KV:[0-9]+]] linear_k16_n64_none (
# KERNELS-Q4-DAG: k[[BF16KV:[0-9]+]] linear_k16_n32_none_bf16 (
# KERNELS-Q4-DAG: k[[HEAD:[0-9]+]] linear_k16_n40_none_q4 (
# KERNELS-Q4-DAG: encode: k[[QKV]]({{.*}}) // tm.linear encoder.layers.0.self_attn.q+k+v
# KERNELS-Q4-DAG: encode: k[[F32KV]]({{.*}}) // tm.linear decoder.layers.0.cross_attn.k+0.cross_attn.v+2.cross_attn.k+2.cross_attn.v
# KERNELS-Q4-DAG: encode: k[[BF16KV]]({{.*}}) // tm.linear decoder.layers.1.cross_attn.k+v
# KERNELS-Q4-DAG: k[[HEAD]]({{.*}}) // tm.linear output

# KERNELS-DAG: k[[F32KV:[0-9]+]] linear_k16_n64_none (
# KERNELS-DAG: k[[BF16KV:[0-9]+]] linear_k16_n32_none_bf16 (
# KERNELS-DAG: k[[HEAD:[0-9]+]] linear_k16_n40_none_bf16 (
# KERNELS-DAG: encode: k[[F32KV]]({{.*}}) // tm.linear decoder.layers.0.cross_attn.k+0.cross_attn.v+2.cross_attn.k+2.cross_attn.v
# KERNELS-DAG: encode: k[[BF16KV]]({{.*}}) // tm.linear decoder.layers.1.cross_attn.k+v
# KERNELS-DAG: k[[HEAD]]({{.*}}) // tm.linear output

# --precision=bf16 on a spec that sets none: every GEMM is bf16, the tied
# LM head's too (the embedding still reads the table in f32).
# RUN: %tmc compile %examples/gpt2-small.tm --emit=kernels --precision=bf16 | FileCheck %s --check-prefix=GPT2
# GPT2: // kernels:
# GPT2-NOT: {{linear_k[0-9]+_n[0-9]+[a-z_]*(none|gelu_tanh|res) \(}}
# GPT2: linear_k768_n2304_b_none_bf16 (
# GPT2-NOT: {{linear_k[0-9]+_n[0-9]+[a-z_]*(none|gelu_tanh|res) \(}}
# GPT2: linear_k768_n50257_none_bf16 (
# GPT2-NOT: {{linear_k[0-9]+_n[0-9]+[a-z_]*(none|gelu_tanh|res) \(}}
# GPT2: // joined weights
# RUN: %tmc compile %examples/gpt2-small.tm --emit=kernels --precision=int8 | FileCheck %s --check-prefix=GPT2-INT8
# GPT2-INT8: // kernels:
# GPT2-INT8-NOT: {{linear_k[0-9]+_n[0-9]+[a-z_]*(none|gelu_tanh|res)(_bf16)? \(}}
# GPT2-INT8: linear_k768_n2304_b_none_int8 (
# GPT2-INT8-NOT: {{linear_k[0-9]+_n[0-9]+[a-z_]*(none|gelu_tanh|res)(_bf16)? \(}}
# GPT2-INT8: linear_k768_n50257_none_int8 (
# GPT2-INT8-NOT: {{linear_k[0-9]+_n[0-9]+[a-z_]*(none|gelu_tanh|res)(_bf16)? \(}}
# GPT2-INT8: // joined weights

# CHECK-TEXT: precision       mixed (linears 11.5 KB as bf16 + 28.5 KB f32 for the f32 linears, norms, biases and embeddings)
# CHECK-TEXT: encoder: 1 layers
# CHECK-TEXT-NEXT: 2 heads {{.*}}, attention full, precision bf16
# CHECK-TEXT: decoder: 3 layers
# CHECK-TEXT-NEXT: layers 0..0: {{.*}}, attention full{{$}}
# CHECK-TEXT-NEXT: layers 1..1: {{.*}}, attention full, precision bf16
# CHECK-TEXT-NEXT: layers 2..2: {{.*}}, attention full{{$}}
# Only decoder layer 1 is bf16 (3072 elements, 6.1 KB).
# CHECK-F32: precision       mixed (linears 6.1 KB as bf16 + 39.3 KB f32 for the f32 linears, norms, biases and embeddings)
# CHECK-F32: encoder: 1 layers
# CHECK-F32-NEXT: 2 heads {{.*}}, attention full{{$}}
# int8: the encoder's 2048 elements in 112 output channels and the head's
# 640 in 40, a byte an element and 8 bytes a channel (3904 bytes).
# CHECK-INT8: precision       mixed (linears 6.1 KB as bf16 + 3.9 KB as int8 + 28.5 KB f32 for the f32 linears, norms, biases and embeddings)
# CHECK-INT8: encoder: 1 layers
# CHECK-INT8-NEXT: 2 heads {{.*}}, attention full, precision int8{{$}}
# CHECK-INT8: decoder: 3 layers
# CHECK-INT8-NEXT: layers 0..0: {{.*}}, attention full{{$}}
# CHECK-INT8-NEXT: layers 1..1: {{.*}}, attention full, precision bf16{{$}}
# CHECK-INT8-NEXT: layers 2..2: {{.*}}, attention full{{$}}
# q4: the encoder's 112 output channels and the head's 40, each K (16 or
# 32) one block of 18 bytes (2736 bytes).
# CHECK-Q4: precision       mixed (linears 6.1 KB as bf16 + 2.7 KB as q4 + 28.5 KB f32 for the f32 linears, norms, biases and embeddings)
# CHECK-Q4: encoder: 1 layers
# CHECK-Q4-NEXT: 2 heads {{.*}}, attention full, precision q4{{$}}
# CHECK-Q4: decoder: 3 layers
# CHECK-Q4-NEXT: layers 0..0: {{.*}}, attention full{{$}}
# CHECK-Q4-NEXT: layers 1..1: {{.*}}, attention full, precision bf16{{$}}
# CHECK-Q4-NEXT: layers 2..2: {{.*}}, attention full{{$}}

# The stacks' layer groups and totals, the model-level value, the weights
# by precision (bf16: 5760 elements at 2 bytes; f32: the other 7136 at 4),
# and the packed weights: bf16 11520 + f32 6144 x 4.
# JSON: "layer_groups": [
# JSON: "first": 0,
# JSON: "precision": "f32"
# JSON: "first": 1,
# JSON: "precision": "bf16"
# JSON: "first": 2,
# JSON: "precision": "f32"
# JSON: "parameters": 9504,
# JSON-NEXT: "precision": "f32",
# JSON: "layer_groups": [
# JSON: "parameters": 2112,
# JSON-NEXT: "precision": "bf16",
# JSON: "position": "sinusoidal",
# JSON-NEXT: "precision": "bf16",
# JSON: "packed": 36096,
# JSON: "weight_bytes": 51584,
# JSON-NEXT: "weight_bytes_by_precision": {
# JSON-NEXT: "bf16": 11520,
# JSON-NEXT: "f32": 28544,
# JSON-NEXT: "int8": 0,
# JSON-NEXT: "q4": 0
# With --precision=f32 the encoder and the head are f32 too.
# JSON-F32: "layer_groups": [
# JSON-F32: "layer_groups": [
# JSON-F32: "parameters": 2112,
# JSON-F32-NEXT: "precision": "f32",
# JSON-F32: "position": "sinusoidal",
# JSON-F32-NEXT: "precision": "f32",
# JSON-F32: "packed": 41472,
# JSON-F32: "weight_bytes_by_precision": {
# JSON-F32-NEXT: "bf16": 6144,
# JSON-F32-NEXT: "f32": 39296,
# JSON-F32-NEXT: "int8": 0,
# JSON-F32-NEXT: "q4": 0
# With --precision=int8 the int8 packed panels hold per output channel K
# (16 or 32, already a multiple of 4) bytes and 8 more: the encoder 2944,
# the head 960; bf16 6144 and f32 24576 as before.
# JSON-INT8: "layer_groups": [
# JSON-INT8: "layer_groups": [
# JSON-INT8: "parameters": 2112,
# JSON-INT8-NEXT: "precision": "int8",
# JSON-INT8: "position": "sinusoidal",
# JSON-INT8-NEXT: "precision": "int8",
# JSON-INT8: "packed": 34624,
# JSON-INT8: "weight_bytes": 51584,
# JSON-INT8-NEXT: "weight_bytes_by_precision": {
# JSON-INT8-NEXT: "bf16": 6144,
# JSON-INT8-NEXT: "f32": 28544,
# JSON-INT8-NEXT: "int8": 3904,
# JSON-INT8-NEXT: "q4": 0
# With --precision=q4 the q4 packed panels hold per output channel one
# pair of blocks (K 16 or 32 is one block), 36 bytes: the encoder's 112
# channels 4032, the head's 40 1440; bf16 6144 and f32 24576 as before.
# JSON-Q4: "layer_groups": [
# JSON-Q4: "layer_groups": [
# JSON-Q4: "parameters": 2112,
# JSON-Q4-NEXT: "precision": "q4",
# JSON-Q4: "position": "sinusoidal",
# JSON-Q4-NEXT: "precision": "q4",
# JSON-Q4: "packed": 36192,
# JSON-Q4: "weight_bytes": 51584,
# JSON-Q4-NEXT: "weight_bytes_by_precision": {
# JSON-Q4-NEXT: "bf16": 6144,
# JSON-Q4-NEXT: "f32": 28544,
# JSON-Q4-NEXT: "int8": 0,
# JSON-Q4-NEXT: "q4": 2736

# Packed bf16 weights round K up to even: d_model 15 and d_ff 31 give
# q/k/v/o 15 x 16, up 31 x 16, down 15 x 32 at 2 bytes (3872), where f32
# packs 1830 elements at 4 (7320).
# RUN: %tmc check --json %S/Inputs/precision-odd.tm | FileCheck %s --check-prefix=ODD
# RUN: %tmc check --json --precision=f32 %S/Inputs/precision-odd.tm | FileCheck %s --check-prefix=ODD-F32
# ODD: "packed": 3872,
# ODD-F32: "packed": 7320,
# Packed int8 weights round K up to a multiple of 4 and add 8 bytes (scale,
# correction) per output channel: q/k/v/o 15 x (16 + 8), up 31 x (16 + 8),
# down 15 x (32 + 8): 2784 bytes. The weights by precision count K as it
# is: 1830 elements and 106 channels at 8, 2678.
# RUN: %tmc check --json --precision=int8 %S/Inputs/precision-odd.tm | FileCheck %s --check-prefix=ODD-INT8
# RUN: %tmc check --precision=int8 %S/Inputs/precision-odd.tm | FileCheck %s --check-prefix=ODD-INT8-TEXT
# ODD-INT8: "packed": 2784,
# ODD-INT8: "weight_bytes_by_precision": {
# ODD-INT8-NEXT: "bf16": 0,
# ODD-INT8-NEXT: "f32": 840,
# ODD-INT8-NEXT: "int8": 2678,
# ODD-INT8-NEXT: "q4": 0
# Every linear int8: no "the f32 linears" in the f32 share.
# ODD-INT8-TEXT: precision       int8 (linears 2.7 KB as int8 + 840 bytes f32 for norms, biases and embeddings)

# q4 over K that 32 does not divide (Inputs/precision-q4.tm: d_model 70,
# d_ff 100, an untied head of 10). Blocks per channel: ceil(70/32) = 3,
# ceil(100/32) = 4. q, k, v, o 70 channels x 3, up 100 x 3, down 70 x 4,
# the head 10 x 3: 1450 blocks of 18 bytes, 26100. The packed panels hold
# the blocks in pairs, 36 bytes each: 2 pairs for K 70 and for K 100, so
# (4 x 70 + 100 + 70 + 10) x 2 x 36 = 33120. f32: the 980 parameters
# outside the matrices at 4 bytes.
# RUN: %tmc check --json %S/Inputs/precision-q4.tm | FileCheck %s --check-prefix=BLOCKS-Q4
# RUN: %tmc check %S/Inputs/precision-q4.tm | FileCheck %s --check-prefix=BLOCKS-Q4-TEXT
# BLOCKS-Q4: {{^}}  "parameters": 35280,
# BLOCKS-Q4: "packed": 33120,
# BLOCKS-Q4: "weight_bytes_by_precision": {
# BLOCKS-Q4-NEXT: "bf16": 0,
# BLOCKS-Q4-NEXT: "f32": 3920,
# BLOCKS-Q4-NEXT: "int8": 0,
# BLOCKS-Q4-NEXT: "q4": 26100
# Every linear q4: no "the f32 linears" in the f32 share.
# BLOCKS-Q4-TEXT: precision       q4 (linears 26.1 KB as q4 + 3.9 KB f32 for norms, biases and embeddings)

# int8's input-width limit is an error at the spec line; q4 has none.
# RUN: not %tmc compile %S/Inputs/precision-wide.tm --emit=tm --precision=int8 2>&1 | FileCheck %s --check-prefix=WIDE-INT8
# RUN: %tmc compile %S/Inputs/precision-wide.tm --emit=tm --precision=q4 | FileCheck %s --check-prefix=WIDE-Q4
# WIDE-INT8: precision-wide.tm:10:5: error: 'tm.linear' op precision int8 sums 66312 products per output in int32; at most 66311 fit (keep this layer in f32, bf16 or q4)
# WIDE-Q4: tm.weight "encoder.layers.0.ffn.down.weight" : tensor<8x66312xf32>
# WIDE-Q4-NEXT: tm.linear {{.*}} {activation = "none", precision = "q4"} : (tensor<?x66312xf32>, tensor<8x66312xf32>) -> tensor<?x8xf32>
