# safetensors_io.py - Reads a .safetensors file into float64 torch tensors.
#
# The format is an 8-byte little-endian header length, a JSON header mapping
# each tensor name to its dtype, shape and byte range, then the raw data. A
# few lines of numpy, so the parity tests need no package beyond Debian's
# python3-torch and python3-numpy.

import json
import struct

import numpy as np
import torch


def _decode(raw, dtype, shape):
    if dtype == "F32":
        values = np.frombuffer(raw, dtype="<f4").astype(np.float64)
    elif dtype == "F16":
        values = np.frombuffer(raw, dtype="<f2").astype(np.float64)
    elif dtype == "BF16":
        # bfloat16 is the top half of a float32.
        wide = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        values = wide.view(np.float32).astype(np.float64)
    else:
        raise ValueError(f"unsupported safetensors dtype {dtype}")
    return torch.from_numpy(values.reshape(shape).copy())


def load(path):
    """Returns ({name: float64 tensor}, {name: dtype string})."""
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    base = 8 + header_len
    tensors, dtypes = {}, {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        tensors[name] = _decode(data[base + begin:base + end], entry["dtype"], entry["shape"])
        dtypes[name] = entry["dtype"]
    return tensors, dtypes
