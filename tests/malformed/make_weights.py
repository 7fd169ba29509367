#!/usr/bin/env python3
"""Writes one malformed (or valid) safetensors file for the malformed-input suite.

    make_weights.py CASE OUT

The files are small and made at test time, so no binary lives in the
repository. They target the toy model of tests/unit/runtime/ToyModel.cpp,
whose manifest is embed.tokens F32 [10, 3] and out.bias F32 [3]; each case
changes one thing about a valid file (only the standard library is used).
"""
import json
import math
import struct
import sys

EMBED = [float(i) for i in range(30)]  # [10, 3]
BIAS = [0.5, 0.0, 2.25]               # [3]


def f32(values):
    return struct.pack("<%df" % len(values), *values)


def layout(tensors):
    """tensors: [(name, dtype, shape, bytes)] -> (header dict, data bytes)."""
    header, data = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    return header, data


def assemble(header, data, header_text=None, data_alignment=8):
    text = header_text if header_text is not None else json.dumps(header)
    text = text if isinstance(text, bytes) else text.encode()
    text += b" " * (-(8 + len(text)) % data_alignment)  # tmc's writer pads the header too
    return struct.pack("<Q", len(text)) + text + data


def valid_tensors():
    return [("embed.tokens", "F32", [10, 3], f32(EMBED)), ("out.bias", "F32", [3], f32(BIAS))]


def make(case):
    header, data = layout(valid_tensors())
    if case == "valid":
        return assemble(header, data)
    if case == "aligned":
        # The data section 128-byte aligned (TMR_BUFFER_ALIGNMENT), as tmc
        # writes it: embed.tokens is then read in place from the mapping
        # (out.bias, at offset 120, from an aligned copy).
        return assemble(header, data, data_alignment=128)
    if case == "empty":
        return b""
    if case == "short":
        return b"\x10\x00\x00"
    if case == "header-beyond-file":
        return struct.pack("<Q", 4096) + b'{"a": 1}'
    if case == "header-length-huge":
        return struct.pack("<Q", 2**63 + 5) + b"{}" * 8
    if case == "truncated":
        whole = assemble(header, data)
        return whole[: len(whole) - 50]  # cut inside the data section
    if case == "broken-json":
        return assemble(None, data, '{"embed.tokens": {"dtype": "F32", "shape": [10, 3],')
    if case == "not-an-object":
        return assemble(None, data, "[1, 2, 3]")
    if case == "not-utf8":
        return assemble(None, data, b'{"\xff\xfe": 1}')
    if case == "missing-tensor":
        header, data = layout(valid_tensors()[:1])
        return assemble(header, data)
    if case == "extra-tensor":
        header, data = layout(valid_tensors() + [("decoder.extra", "F32", [2], f32([1, 2]))])
        return assemble(header, data)
    if case == "wrong-shape":
        header, data = layout([("embed.tokens", "F32", [10, 4], f32(EMBED + [0] * 10)),
                               ("out.bias", "F32", [3], f32(BIAS))])
        return assemble(header, data)
    if case == "wrong-dtype":
        half = struct.pack("<3e", *BIAS)
        header, data = layout([valid_tensors()[0], ("out.bias", "F16", [3], half)])
        return assemble(header, data)
    if case == "unsupported-dtype":
        header["out.bias"]["dtype"] = "I64"
        return assemble(header, data)
    if case == "unknown-dtype":
        header["out.bias"]["dtype"] = "F33"
        return assemble(header, data)
    if case == "missing-field":
        del header["out.bias"]["data_offsets"]
        return assemble(header, data)
    if case == "negative-dimension":
        header["out.bias"]["shape"] = [-3]
        return assemble(header, data)
    if case == "size-mismatch":
        header["out.bias"]["shape"] = [4]
        return assemble(header, data)
    if case == "overlapping-offsets":
        header["out.bias"]["data_offsets"] = [100, 112]  # inside embed.tokens [0, 120)
        return assemble(header, data)
    if case == "offsets-out-of-range":
        header["out.bias"]["data_offsets"] = [120, 132 + 4000]
        header["out.bias"]["shape"] = [1003]
        return assemble(header, data)
    if case == "offsets-reversed":
        header["out.bias"]["data_offsets"] = [132, 120]
        return assemble(header, data)
    if case == "offsets-overflow":
        header["out.bias"]["data_offsets"] = [2**64 - 4, 8]
        return assemble(header, data)
    if case == "shape-overflow":
        header["out.bias"]["shape"] = [2**32, 2**32, 2**8]
        return assemble(header, data)
    if case == "duplicate-tensor":
        text = json.dumps(header)
        text = text[:-1] + ', "out.bias": ' + json.dumps(header["out.bias"]) + "}"
        return assemble(None, data, text)
    if case == "decoder":  # for the decoder variant: embed.tokens [10, 10], out.bias [10]
        header, data = layout([("embed.tokens", "F32", [10, 10], f32([float(i) for i in range(100)])),
                               ("out.bias", "F32", [10], f32([0.0] * 10))])
        return assemble(header, data)
    if case == "nul-in-name":  # reads as out.bias where a NUL ends the name
        header["out.bias\0x"] = header.pop("out.bias")
        return assemble(header, data)
    if case == "huge-name":  # an extra tensor named by 10 MiB of 'x'
        header, data = layout(valid_tensors() + [("x" * (10 << 20), "F32", [1], f32([1]))])
        return assemble(header, data)
    if case == "nan":
        embed = list(EMBED)
        embed[4 * 3 + 1] = math.nan  # element [4, 1]
        embed[9 * 3 + 2] = math.nan
        header, data = layout([("embed.tokens", "F32", [10, 3], f32(embed)),
                               ("out.bias", "F32", [3], f32(BIAS))])
        return assemble(header, data)
    if case == "inf":
        header, data = layout([valid_tensors()[0],
                               ("out.bias", "F32", [3], f32([0.5, -math.inf, 2.25]))])
        return assemble(header, data)
    raise SystemExit("make_weights.py: unknown case '%s'" % case)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    with open(sys.argv[2], "wb") as out:
        out.write(make(sys.argv[1]))
