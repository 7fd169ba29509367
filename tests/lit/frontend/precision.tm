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
# JSON-NEXT: "int8": 0
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
# JSON-F32-NEXT: "int8": 0
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
# JSON-INT8-NEXT: "int8": 3904

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
# ODD-INT8-NEXT: "int8": 2678
# Every linear int8: no "the f32 linears" in the f32 share.
# ODD-INT8-TEXT: precision       int8 (linears 2.7 KB as int8 + 840 bytes f32 for norms, biases and embeddings)
