#!/usr/bin/env python3
"""Writes one malformed (or valid) tokenizer directory for the malformed-input suite.

    make_tokenizer.py CASE DIR

For the toy model of tests/unit/runtime/ToyModel.cpp (vocabulary [0, 10)).
Made at test time, like the weight files, so that no file with broken UTF-8
lives in the repository (only the standard library is used).
"""
import json
import os
import sys


def gpt2_byte_symbols():
    """GPT-2's bytes_to_unicode(): the 256 one-character tokens every encoder.json has."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    symbols, extra = {}, 0
    for b in range(256):
        if b in printable:
            symbols[b] = chr(b)
        else:
            symbols[b] = chr(256 + extra)
            extra += 1
    return [symbols[b] for b in range(256)]


def encoder_json():
    return json.dumps({s: i for i, s in enumerate(gpt2_byte_symbols())}).encode()


def make(case):
    """{file name: bytes} of the directory."""
    merges = b"#version: 0.2\n"
    if case == "bpe":  # valid, 256 ids: more than the toy model's 10
        return {"encoder.json": encoder_json(), "vocab.bpe": merges}
    if case == "bpe-not-utf8":  # byte 0xFF inside a key, at byte offset 10 of line 1
        return {"encoder.json": b'{"a": 1, "\xff": 2}', "vocab.bpe": merges}
    if case == "bpe-truncated":  # ends inside the object, on line 2
        return {"encoder.json": b'{"a": 1,\n "b": ', "vocab.bpe": merges}
    if case.startswith("wordpiece-"):  # wordpiece-N: [UNK] and N - 1 words
        count = int(case[len("wordpiece-"):])
        words = ["[UNK]"] + ["w%d" % i for i in range(1, count)]
        return {"vocab.txt": ("\n".join(words) + "\n").encode()}
    raise SystemExit("make_tokenizer.py: unknown case '%s'" % case)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    os.makedirs(sys.argv[2], exist_ok=True)
    for name, data in make(sys.argv[1]).items():
        with open(os.path.join(sys.argv[2], name), "wb") as out:
            out.write(data)
