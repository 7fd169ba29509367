"""bench/e2e/gguf_writer.py - a GPT-2-shaped tmc model as a GGUF v3 file for llama.cpp.

Writes llama.cpp's `gpt2` architecture: its tensor names, its metadata keys and
GPT-2's BPE vocabulary (encoder.json + vocab.bpe), which llama.cpp requires to
load a model. Weights are tmc's safetensors (f32): q, k, v are
concatenated into llama.cpp's fused attn_qkv, and a tied LM head is left out
(llama.cpp's gpt2 then reads token_embd, as tmc does). `matrix_type` f16,
bf16, q8_0 or q4_0 stores every 2-D tensor in that type, as llama.cpp's own
converter (or llama-quantize) does (1-D norms and biases stay f32).
Q8_0 (ggml-common.h's block_q8_0): blocks of 32 consecutive weights of a row,
each an f16 scale d = max|w| / 127 then 32 int8 round(w / d), 34 bytes, as
ggml's quantize_row_q8_0_ref computes them (round half away from zero).
Q4_0 (block_q4_0): an f16 scale d = mx / -8 (mx the first weight of largest
magnitude), then 16 bytes whose low nibbles are weights 0..15 and high
nibbles 16..31, each min(15, trunc(w / d + 8.5)), 18 bytes, as
quantize_row_q4_0_ref computes them: the same values as tmc's q4 precision.

Format (GGUF v3, little-endian): magic "GGUF", version, tensor count, metadata
count; metadata as (key, type, value); tensor infos as (name, n_dims, dims
innermost first, type, offset); padding to the alignment; the tensor data,
each tensor aligned.
"""
import json
import struct

import numpy as np

ALIGNMENT = 32
# gguf_type
U32, I32, F32T, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9
GGML_F32 = 0
# ggml_type of the 2-D tensors for each matrix_type (ggml.h: F16 = 1, Q8_0 = 8, BF16 = 30).
GGML_TYPES = {"f32": 0, "f16": 1, "bf16": 30, "q8_0": 8, "q4_0": 2}
# general.file_type (llama.h's llama_ftype): ALL_F32 = 0, MOSTLY_F16 = 1, MOSTLY_Q4_0 = 2,
# MOSTLY_Q8_0 = 7, MOSTLY_BF16 = 32.
FILE_TYPES = {"f32": 0, "f16": 1, "bf16": 32, "q8_0": 7, "q4_0": 2}
Q8_0_BLOCK = 32
Q4_0_BLOCK = 32


def _bf16_bytes(array):
    """f32 to bf16 words, round to nearest even (finite values), little-endian."""
    bits = np.ascontiguousarray(array, dtype="<f4").view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype("<u2").tobytes()


def _q8_0_bytes(array):
    """Rows in blocks of 32: an f16 scale, then 32 int8 (quantize_row_q8_0_ref)."""
    if array.shape[-1] % Q8_0_BLOCK:
        raise ValueError(f"q8_0 needs rows of a multiple of {Q8_0_BLOCK}, not {array.shape[-1]}")
    blocks = np.ascontiguousarray(array, dtype=np.float32).reshape(-1, Q8_0_BLOCK)
    scale = np.abs(blocks).max(axis=1) / np.float32(127)
    inverse = np.divide(np.float32(1), scale, out=np.zeros_like(scale), where=scale > 0)
    scaled = blocks * inverse[:, None]
    quants = (np.sign(scaled) * np.floor(np.abs(scaled) + np.float32(0.5))).astype(np.int8)
    out = np.empty(len(blocks), dtype=[("d", "<f2"), ("qs", "i1", (Q8_0_BLOCK,))])
    out["d"] = scale.astype("<f2")
    out["qs"] = quants
    return out.tobytes()


def q4_0_blocks(array):
    """Rows in blocks of 32 as quantize_row_q4_0_ref: (f16 scales, q in [0, 15])."""
    if array.shape[-1] % Q4_0_BLOCK:
        raise ValueError(f"q4_0 needs rows of a multiple of {Q4_0_BLOCK}, not {array.shape[-1]}")
    blocks = np.ascontiguousarray(array, dtype=np.float32).reshape(-1, Q4_0_BLOCK)
    first_largest = np.abs(blocks).argmax(axis=1)  # argmax: the first of equal magnitudes
    scale = blocks[np.arange(len(blocks)), first_largest] / np.float32(-8)
    inverse = np.divide(np.float32(1), scale, out=np.zeros_like(scale), where=scale != 0)
    shifted = (blocks * inverse[:, None]).astype(np.float32) + np.float32(8.5)
    quants = np.minimum(np.trunc(shifted), 15).astype(np.uint8)
    return scale.astype("<f2"), quants


def _q4_0_bytes(array):
    """Each block: its f16 scale, then weights j and j + 16 in byte j's nibbles."""
    scale, quants = q4_0_blocks(array)
    out = np.empty(len(quants), dtype=[("d", "<f2"), ("qs", "u1", (Q4_0_BLOCK // 2,))])
    out["d"] = scale
    out["qs"] = quants[:, :16] | (quants[:, 16:] << 4)
    return out.tobytes()


def _tensor_bytes(array, matrix_type):
    if array.ndim < 2 or matrix_type == "f32":
        return np.ascontiguousarray(array, dtype="<f4").tobytes()
    if matrix_type == "f16":
        return np.ascontiguousarray(array, dtype="<f2").tobytes()
    if matrix_type == "q8_0":
        return _q8_0_bytes(array)
    if matrix_type == "q4_0":
        return _q4_0_bytes(array)
    return _bf16_bytes(array)


def _string(text):
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _value(kind, value):
    if kind == U32:
        return struct.pack("<I", value)
    if kind == I32:
        return struct.pack("<i", value)
    if kind == F32T:
        return struct.pack("<f", value)
    if kind == BOOL:
        return struct.pack("<?", value)
    if kind == STRING:
        return _string(value)
    raise ValueError(kind)


def _kv(key, kind, value):
    out = _string(key) + struct.pack("<I", kind)
    if kind == ARRAY:
        elem, items = value
        out += struct.pack("<IQ", elem, len(items))
        if elem == STRING:
            out += b"".join(_string(s) for s in items)
        elif elem == I32:
            out += np.asarray(items, dtype="<i4").tobytes()
        else:
            raise ValueError(elem)
        return out
    return out + _value(kind, value)


def gpt2_tensors(spec, weights):
    """(llama.cpp name, f32 array in PyTorch layout) for every tensor."""
    dec = spec["decoder"]
    if (spec["position"] != "learned" or not dec["norm"].startswith("pre(layernorm")
            or dec["ffn"] != "gelu_tanh" or not dec["bias"] or dec["kv_heads"] != dec["heads"]
            or not spec["output"].startswith("lm_head") or "bias = true" in spec["output"]
            or "encoder" in spec):
        raise ValueError("llama.cpp's gpt2 architecture needs a GPT-2-shaped decoder "
                         "(learned positions, pre-layernorm, gelu_tanh, biases, MHA, LM head)")
    out = [("token_embd.weight", weights["embed.tokens"]),
           ("position_embd.weight", weights["embed.positions"]),
           ("output_norm.weight", weights["decoder.final_norm.weight"]),
           ("output_norm.bias", weights["decoder.final_norm.bias"])]
    if "tied = true" not in spec["output"]:
        out.append(("output.weight", weights["output.weight"]))
    for i in range(dec["layers"]):
        p = f"decoder.layers.{i}."
        b = f"blk.{i}."
        qkv = lambda suffix: np.concatenate([weights[p + f"self_attn.{x}.{suffix}"] for x in "qkv"], 0)
        out += [(b + "attn_norm.weight", weights[p + "norm1.weight"]),
                (b + "attn_norm.bias", weights[p + "norm1.bias"]),
                (b + "attn_qkv.weight", qkv("weight")),
                (b + "attn_qkv.bias", qkv("bias")),
                (b + "attn_output.weight", weights[p + "self_attn.o.weight"]),
                (b + "attn_output.bias", weights[p + "self_attn.o.bias"]),
                (b + "ffn_norm.weight", weights[p + "norm2.weight"]),
                (b + "ffn_norm.bias", weights[p + "norm2.bias"]),
                (b + "ffn_up.weight", weights[p + "ffn.up.weight"]),
                (b + "ffn_up.bias", weights[p + "ffn.up.bias"]),
                (b + "ffn_down.weight", weights[p + "ffn.down.weight"]),
                (b + "ffn_down.bias", weights[p + "ffn.down.bias"])]
    return out


def gpt2_vocab(tokenizer_dir, vocab):
    with open(f"{tokenizer_dir}/encoder.json", encoding="utf-8") as f:
        encoder = json.load(f)
    tokens = [None] * vocab
    for text, index in encoder.items():
        if index < vocab:
            tokens[index] = text
    for i, t in enumerate(tokens):
        if t is None:
            tokens[i] = f"[PAD{i}]"
    with open(f"{tokenizer_dir}/vocab.bpe", encoding="utf-8") as f:
        merges = [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#version")]
    # 1: normal, 3: control (<|endoftext|>).
    types = [3 if t == "<|endoftext|>" else 1 for t in tokens]
    return tokens, types, merges


def write_gpt2(path, spec, weights, tokenizer_dir, matrix_type="f32"):
    dec = spec["decoder"]
    eps = float(dec["norm"].split("=")[1].split(")")[0])
    tokens, types, merges = gpt2_vocab(tokenizer_dir, spec["vocab"])
    eot = tokens.index("<|endoftext|>") if "<|endoftext|>" in tokens else 0
    meta = [("general.architecture", STRING, "gpt2"),
            ("general.name", STRING, spec["model"]),
            ("general.file_type", U32, FILE_TYPES[matrix_type]),
            ("general.alignment", U32, ALIGNMENT),
            ("gpt2.context_length", U32, spec["max_seq"]),
            ("gpt2.embedding_length", U32, spec["d_model"]),
            ("gpt2.feed_forward_length", U32, dec["d_ff"]),
            ("gpt2.block_count", U32, dec["layers"]),
            ("gpt2.attention.head_count", U32, dec["heads"]),
            ("gpt2.attention.layer_norm_epsilon", F32T, eps),
            ("tokenizer.ggml.model", STRING, "gpt2"),
            ("tokenizer.ggml.pre", STRING, "gpt-2"),
            ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
            ("tokenizer.ggml.token_type", ARRAY, (I32, types)),
            ("tokenizer.ggml.merges", ARRAY, (STRING, merges)),
            ("tokenizer.ggml.bos_token_id", U32, eot),
            ("tokenizer.ggml.eos_token_id", U32, eot),
            ("tokenizer.ggml.add_bos_token", BOOL, False)]
    tensors = gpt2_tensors(spec, weights)
    header = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta))
    header += b"".join(_kv(*m) for m in meta)
    offset = 0
    datas = [_tensor_bytes(array, matrix_type) for _, array in tensors]
    for (name, array), data in zip(tensors, datas):
        dims = list(reversed(array.shape))  # ggml: innermost first
        header += _string(name) + struct.pack("<I", len(dims))
        header += b"".join(struct.pack("<Q", d) for d in dims)
        kind = GGML_TYPES[matrix_type] if array.ndim >= 2 else GGML_F32
        header += struct.pack("<IQ", kind, offset)
        offset += (len(data) + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(header)
        f.write(b"\0" * (-len(header) % ALIGNMENT))
        for data in datas:
            f.write(data)
            f.write(b"\0" * (-len(data) % ALIGNMENT))
    import os
    os.replace(tmp, path)
