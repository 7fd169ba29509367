# safetensors_io.py - Reads and writes .safetensors files.
#
# The format is an 8-byte little-endian header length, a JSON header mapping
# each tensor name to its dtype, shape and byte range, then the raw data. A
# few lines of numpy, so the parity tests need no package beyond Debian's
# python3-torch and python3-numpy.
#
# load() gives float64 torch tensors (the parity tests' use); load_raw() gives
# numpy arrays of every dtype below and the file's metadata; save() writes a
# file laid out byte for byte as the `safetensors` library (which Hugging
# Face's save_pretrained calls) lays it out.

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


# The dtypes save() and load_raw() handle, as numpy stores them. BF16 has no
# numpy dtype: it is kept as its raw 16 bits (BFloat16 below).
_NUMPY_DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
    "I8": "i1", "U8": "u1", "BOOL": "?",
}
# The order of the `safetensors` crate's Dtype enum (derive(Ord)): the
# library writes tensors by descending dtype, then by name, so that wider
# elements come first and every tensor stays aligned.
_DTYPE_RANK = ["BOOL", "U8", "I8", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64",
               "I64", "U64"]


class BFloat16:
    """A bfloat16 tensor to save: `values` (any float array) rounded to
    bfloat16 through float32, round to nearest even, as torch's
    .to(torch.bfloat16) of a float32 tensor does."""

    def __init__(self, values):
        wide = np.ascontiguousarray(values, dtype="<f4")
        bits = wide.view("<u4").astype(np.uint64)
        # Round to nearest even on the 16 bits dropped; NaN stays a quiet NaN.
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        rounded = np.where(np.isnan(wide), (bits >> 16) | 0x40, rounded)
        self.bits = rounded.astype("<u2").reshape(wide.shape)
        self.shape = wide.shape

    def widen(self):
        """The values as float32, exactly."""
        return (self.bits.astype(np.uint32) << 16).view(np.float32)


def _entry(value):
    """(dtype string, shape, bytes) of one tensor to save."""
    if isinstance(value, BFloat16):
        return "BF16", list(value.shape), value.bits.tobytes()
    array = np.asarray(value)
    for dtype, numpy_dtype in _NUMPY_DTYPES.items():
        if array.dtype == np.dtype(numpy_dtype):
            return dtype, list(array.shape), np.ascontiguousarray(array, numpy_dtype).tobytes()
    raise ValueError(f"cannot save numpy dtype {array.dtype} (have {sorted(_NUMPY_DTYPES)} "
                     "and BFloat16)")


def save(path, tensors, metadata=None):
    """Writes {name: numpy array or BFloat16} to `path` as the `safetensors`
    library does: the header is compact JSON, `__metadata__` first (a
    {str: str} dict; save_pretrained passes {"format": "pt"}), then the
    tensors by descending dtype and then by name, each with its
    data_offsets; the header is padded with spaces to a multiple of 8 bytes
    and the data follows it in the same order. Returns the data bytes."""
    entries = sorted(((name,) + _entry(value) for name, value in tensors.items()),
                     key=lambda e: (-_DTYPE_RANK.index(e[1]), e[0]))
    header, offset = {}, 0
    if metadata is not None:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name, dtype, shape, raw in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for entry in entries:
            f.write(entry[3])
    return offset


def load_raw(path):
    """Returns ({name: numpy array}, {name: dtype string}, metadata or None):
    each tensor in its stored dtype, except BF16, widened exactly to float32."""
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    base = 8 + header_len
    arrays, dtypes = {}, {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        raw, dtype = data[base + begin:base + end], entry["dtype"]
        if dtype == "BF16":
            values = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif dtype in _NUMPY_DTYPES:
            values = np.frombuffer(raw, dtype=_NUMPY_DTYPES[dtype])
        else:
            raise ValueError(f"{path}: tensor '{name}' has unsupported dtype {dtype}")
        arrays[name] = values.reshape(entry["shape"]).copy()
        dtypes[name] = dtype
    return arrays, dtypes, header.get("__metadata__")
