#!/usr/bin/env python3
"""An independent check of `tmc quantize` (docs/spec-language.md, "Quantized
weight files"): reads the f32 file and the quantized one with a safetensors
parser of its own, recomputes every int8, q4 and bf16 tensor and scale with
numpy from the contract's arithmetic, and requires them to be equal bit for
bit, every other tensor byte-identical, and the names, dtypes, shapes and
order as the contract says.

  check_quantized.py F32 QUANTIZED KIND=PREFIX...
      KIND is int8, q4 or bf16: every matrix (rank 2) whose name starts with
      PREFIX must be stored so; every other tensor unchanged.
  check_quantized.py poison IN OUT NAME FLAT_INDEX VALUE
      copies IN to OUT with one element of the f32 tensor NAME replaced.
  check_quantized.py edges IN OUT INT8_NAME Q4_NAME
      copies IN to OUT with rows of the two [N, K] tensors (N >= 3, K > 32)
      replaced by the contract's corner cases: all zeros, rounding ties, +v
      and -v as the largest magnitude, a clamped q4 value.
"""
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "I8": np.int8, "U8": np.uint8}


def read(path):
    """[(name, dtype, shape, raw bytes)] in data order."""
    with open(path, "rb") as f:
        blob = f.read()
    (length,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + length])
    header.pop("__metadata__", None)
    data = blob[8 + length:]
    entries = sorted(header.items(), key=lambda item: item[1]["data_offsets"][0])
    return [(name, e["dtype"], list(e["shape"]), data[e["data_offsets"][0]:e["data_offsets"][1]])
            for name, e in entries]


def write(path, tensors):
    header, offset = {}, 0
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(t[3] for t in tensors))


def int8(w):
    m = np.abs(w).max(axis=1)
    scale = m / np.float32(127)
    inv = np.zeros_like(m)
    np.divide(np.float32(127), m, out=inv, where=m > 0)
    q = np.clip(np.rint(w * inv[:, None]), -127, 127).astype(np.int8)
    return q, scale.astype(np.float32)


def q4(w):
    n, k = w.shape
    blocks = -(-k // 32)
    padded = np.zeros((n, 32 * blocks), np.float32)
    padded[:, :k] = w
    b = padded.reshape(n, blocks, 32)
    first = np.argmax(np.abs(b), axis=2)  # the first of the largest magnitude
    mx = np.take_along_axis(b, first[:, :, None], axis=2)[:, :, 0]
    d = mx / np.float32(-8)
    inv = np.zeros_like(d)
    np.divide(np.float32(1), d, out=inv, where=d != 0)
    product = b * inv[:, :, None]
    total = product + np.float32(8.5)
    q = np.minimum(15, np.trunc(total)).astype(np.uint8)
    nibbles = q[:, :, :16] | (q[:, :, 16:] << 4)
    return nibbles.reshape(n, 16 * blocks), d.astype(np.float16)


def bf16(w):
    bits = w.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def check(f32_path, quantized_path, rules):
    source = read(f32_path)
    stored = read(quantized_path)
    expected = []  # (name, dtype, shape, raw)
    counts = {"int8": 0, "q4": 0, "bf16": 0, "unchanged": 0}
    for name, dtype, shape, raw in source:
        kind = next((k for k, prefix in rules if name.startswith(prefix) and len(shape) == 2), None)
        if kind is None:
            expected.append((name, dtype, shape, raw))
            counts["unchanged"] += 1
            continue
        assert dtype == "F32", f"{name}: the source must be F32, is {dtype}"
        w = np.frombuffer(raw, np.float32).reshape(shape)
        counts[kind] += 1
        if kind == "int8":
            q, s = int8(w)
            expected.append((name, "I8", list(q.shape), q.tobytes()))
            expected.append((name + ".scale", "F32", list(s.shape), s.tobytes()))
        elif kind == "q4":
            q, s = q4(w)
            expected.append((name, "U8", list(q.shape), q.tobytes()))
            expected.append((name + ".scale", "F16", list(s.shape), s.tobytes()))
        else:
            expected.append((name, "BF16", shape, bf16(w).tobytes()))
    got_names = [t[0] for t in stored]
    want_names = [t[0] for t in expected]
    assert got_names == want_names, f"names/order differ:\n got {got_names}\nwant {want_names}"
    for (name, dtype, shape, raw), (_, gdtype, gshape, graw) in zip(expected, stored):
        assert (gdtype, gshape) == (dtype, shape), f"{name}: {gdtype} {gshape}, want {dtype} {shape}"
        if graw != raw:
            got = np.frombuffer(graw, DTYPES[dtype])
            want = np.frombuffer(raw, DTYPES[dtype])
            width = {1: np.uint8, 2: np.uint16, 4: np.uint32}[got.itemsize]
            bad = np.nonzero(got.view(width) != want.view(width))[0]  # bits: NaN too
            raise AssertionError(f"{name}: {len(bad)} values differ, the first at {bad[0]}: "
                                 f"{got[bad[0]]} vs {want[bad[0]]}")
    print(f"checked {len(stored)} tensors: int8 {counts['int8']}, q4 {counts['q4']}, "
          f"bf16 {counts['bf16']} (each scale too), unchanged {counts['unchanged']}: all exact")


def poison(src, dst, name, index, value):
    tensors = []
    for tname, dtype, shape, raw in read(src):
        if tname == name:
            w = np.frombuffer(raw, np.float32).copy()
            w[int(index)] = np.float32(float(value))
            raw = w.tobytes()
        tensors.append((tname, dtype, shape, raw))
    write(dst, tensors)


def edges(src, dst, int8_name, q4_name):
    tensors = []
    for name, dtype, shape, raw in read(src):
        w = np.frombuffer(raw, np.float32).reshape(shape).copy()
        k = shape[-1]
        if name == int8_name:
            w[0] = 0  # m = 0: scale 0, every q 0
            # m = 127: inv = 1, so q = rint(w): ties go to even (0.5 -> 0, 1.5 -> 2, -2.5 -> -2).
            w[1] = (np.arange(k) % 9 - 4) + np.float32(0.5)
            w[1, 3] = -127
            w[2, :] = -1e-3  # equal magnitudes; the last channel's scale from the negative
        elif name == q4_name:
            w[0] = 0  # d = 0: every stored value 8
            w[1] = 0.25
            w[1, 2], w[1, 5] = -3, 3  # the first of the largest magnitude: -3, so d = 0.375
            w[1, 7] = 2.9  # 2.9 / 0.375 + 8.5 = 16.2: clamped to 15
            w[2, 32:] = 3
            w[2, 33] = -3  # the padded block: +3 first, d = -0.375
        tensors.append((name, dtype, shape, w.tobytes()))
    write(dst, tensors)


if __name__ == "__main__":
    if sys.argv[1] == "poison":
        poison(*sys.argv[2:7])
    elif sys.argv[1] == "edges":
        edges(*sys.argv[2:6])
    else:
        rules = [tuple(arg.split("=", 1)) for arg in sys.argv[3:]]
        check(sys.argv[1], sys.argv[2], rules)
