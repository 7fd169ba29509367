# `kv_cache` at its three levels: the model's bf16 is the decoder's default,
# layer 1's own f16 wins over it; the encoder keeps no cache and stays f32.
# Each decoder layer's caches take its value: its own keys and values, and
# the cross-attention's that @encode appends and @forward reads back.
# --kv-cache replaces the model-level value only (layer 1 keeps its f16).
# RUN: %tmc compile %s --emit=tm | FileCheck %s --check-prefix=TM
# RUN: %tmc compile %s --emit=tm --kv-cache bf16 | FileCheck %s --check-prefix=TM
# RUN: %tmc compile %s --emit=tm --kv-cache=f32 | FileCheck %s --check-prefix=TM-F32
# The attention kernels read the caches as stored: kernels of their own per
# precision, named ..._kvbf16 / ..._kvf16; the encoder's has none.
# RUN: %tmc compile %s --emit=kernels | FileCheck %s --check-prefix=KERNELS
# tmc check: the caches' bytes at 2 an element (4 for f32), per layer.
# RUN: %tmc check %s | FileCheck %s --check-prefix=CHECK-TEXT
# RUN: %tmc check %s --kv-cache=f32 | FileCheck %s --check-prefix=CHECK-F32
# RUN: %tmc check --json %s | FileCheck %s --check-prefix=JSON

model kv {
  vocab = 40
  d_model = 16
  max_seq = 8
  output = lm_head(tied = false)
  kv_cache = bf16
  encoder {
    layers = 1
    heads = 2
    d_ff = 32
  }
  decoder {
    layers = 3
    heads = 2
    kv_heads = 1
    d_ff = 32
    layers 1..1 { kv_cache = f16 }
  }
}

# TM-LABEL: func.func @encode
# TM-NOT: precision
# TM: tm.cache_append {{.*}} {capacity = 8 : i64, name = "decoder.layers.0.cross_attn.k", precision = "bf16"}
# TM: tm.cache_append {{.*}} {capacity = 8 : i64, name = "decoder.layers.0.cross_attn.v", precision = "bf16"}
# TM: tm.cache_append {{.*}} {capacity = 8 : i64, name = "decoder.layers.1.cross_attn.k", precision = "f16"}
# TM: tm.cache_append {{.*}} {capacity = 8 : i64, name = "decoder.layers.1.cross_attn.v", precision = "f16"}
# TM: tm.cache_append {{.*}} {capacity = 8 : i64, name = "decoder.layers.2.cross_attn.k", precision = "bf16"}
# TM-LABEL: func.func @forward
# TM: tm.cache_append {{.*}} {capacity = 8 : i64, name = "decoder.layers.0.self_attn.k", precision = "bf16"}
# TM: tm.cache_append {{.*}} {capacity = 8 : i64, name = "decoder.layers.0.self_attn.v", precision = "bf16"}
# TM: tm.cache_read {capacity = 8 : i64, name = "decoder.layers.0.cross_attn.k", precision = "bf16"}
# TM: tm.cache_append {{.*}} {capacity = 8 : i64, name = "decoder.layers.1.self_attn.k", precision = "f16"}
# TM: tm.cache_read {capacity = 8 : i64, name = "decoder.layers.1.cross_attn.v", precision = "f16"}
# TM: tm.cache_append {{.*}} {capacity = 8 : i64, name = "decoder.layers.2.self_attn.v", precision = "bf16"}

# TM-F32-LABEL: func.func @forward
# TM-F32: tm.cache_append {{.*}} {capacity = 8 : i64, name = "decoder.layers.0.self_attn.k"} :
# TM-F32: tm.cache_append {{.*}} {capacity = 8 : i64, name = "decoder.layers.1.self_attn.k", precision = "f16"}
# TM-F32: tm.cache_read {capacity = 8 : i64, name = "decoder.layers.1.cross_attn.k", precision = "f16"}
# TM-F32: tm.cache_append {{.*}} {capacity = 8 : i64, name = "decoder.layers.2.self_attn.k"} :

# KERNELS: tmk.kernel @attention attention {head_dim = 8 : i64, heads = 2 : i64, kv_heads = 2 : i64, mask = #tm.mask<>,
# KERNELS: tmk.kernel @attention_1 attention {decode, {{.*}} kv_heads = 1 : i64, kv_precision = "bf16", mask = #tm.mask<causal = true, decoder = true>
# KERNELS: tmk.kernel @attention_2 attention {decode, {{.*}} kv_heads = 1 : i64, kv_precision = "bf16", mask = #tm.mask<padding = true>
# KERNELS: tmk.kernel @attention_3 attention {decode, {{.*}} kv_heads = 1 : i64, kv_precision = "f16", mask = #tm.mask<causal = true, decoder = true>
# KERNELS: tmk.kernel @attention_4 attention {decode, {{.*}} kv_heads = 1 : i64, kv_precision = "f16", mask = #tm.mask<padding = true>

# Keys and values of 3 layers, self- and cross-attention, 8 rows of 8, at 2 bytes.
# CHECK-TEXT: KV-cache bytes  1536 (1.5K) (mixed, max_seq = 8)
# CHECK-TEXT: encoder: 1 layers
# CHECK-TEXT-NEXT: 2 heads (kv 2, head_dim 8), d_ff 32, ffn relu, post(layernorm(eps = 1e-5)), bias, mask none, attention full{{$}}
# CHECK-TEXT: layers 0..0: {{.*}}, attention full, kv_cache bf16{{$}}
# CHECK-TEXT-NEXT: layers 1..1: {{.*}}, attention full, kv_cache f16{{$}}
# CHECK-TEXT-NEXT: layers 2..2: {{.*}}, attention full, kv_cache bf16{{$}}
# CHECK-TEXT: KV cache 1.5 KB

# Layers 0 and 2 at 4 bytes, layer 1 at 2: 2048 + 512.
# CHECK-F32: KV-cache bytes  2560 (2.6K) (mixed, max_seq = 8)
# CHECK-F32: layers 0..0: {{.*}}, attention full{{$}}
# CHECK-F32-NEXT: layers 1..1: {{.*}}, attention full, kv_cache f16{{$}}

# JSON: "kv_cache": "bf16",
# JSON: "kv_cache": "f16",
# JSON: "kv_cache": "mixed",
# JSON-NEXT: "kv_cache_bytes": 1536,
# JSON: "kv_cache": 1536,
