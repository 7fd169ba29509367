#!/usr/bin/env python3
"""splice_tensors.py BASE DONOR OUT NAME...: BASE's tensors, except that each
NAME (and its NAME.scale, if any) comes from DONOR: e.g. one f32 weight put
back into a `tmc quantize` file. Standard library only."""
import json
import struct
import sys


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        tensors[name] = (entry["dtype"], entry["shape"], body[begin:end])
    return tensors


def main():
    base, donor, out, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    tensors, donated = read(base), read(donor)
    for name in names:
        for key in (name, name + ".scale"):
            tensors.pop(key, None)
            if key in donated:
                tensors[key] = donated[key]
    header, body = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    text = json.dumps(header).encode()
    text += b" " * (-(8 + len(text)) % 8)
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + body)


if __name__ == "__main__":
    main()
