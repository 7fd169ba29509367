"""The KJV decoder's pieces shared by train.py and tests/trained: the model in
PyTorch, a GPT-2-style byte-level BPE tokenizer, and safetensors I/O.

The model is the one examples/kjv/kjv.tm describes, written out by hand so that
it computes exactly what the spec language's contract (docs/spec-language.md)
says: pre-norm rmsnorm blocks, rotary positions (rotate-half), SwiGLU, no
biases, LM head tied to the token table. Its parameters carry the canonical
names of `tmc manifest`, so the safetensors it writes load into the compiled
executable unchanged.

The tokenizer is GPT-2's algorithm (pre-tokenizer regex, byte-to-unicode map,
merges by rank) with merges of our own, so runtime/bpe_tokenizer.cpp reads its
encoder.json and vocab.bpe as it reads GPT-2's. Only the standard library,
numpy and torch are used (python3-torch and python3-numpy of Debian 12).
"""
import heapq
import json
import math
import os
import struct
import unicodedata
from collections import Counter

import numpy as np
import torch
import torch.nn.functional as F

# --- the model (must agree with kjv.tm) -------------------------------------

VOCAB = 2048
D_MODEL = 128
MAX_SEQ = 128
LAYERS = 4
HEADS = 4
HEAD_DIM = D_MODEL // HEADS
D_FF = 344
ROPE_THETA = 10000.0
EPS = 1e-5


class Decoder(torch.nn.Module):
    """kjv.tm in PyTorch; parameter names are tmc's canonical weight names
    (dots become "/" in the module tree, see state_dict_tmc)."""

    def __init__(self):
        super().__init__()
        self.tokens = torch.nn.Parameter(torch.empty(VOCAB, D_MODEL))
        self.layers = torch.nn.ModuleList()
        for _ in range(LAYERS):
            layer = torch.nn.Module()
            for name in ("q", "k", "v", "o"):
                setattr(layer, name, torch.nn.Linear(D_MODEL, D_MODEL, bias=False))
            layer.norm1 = torch.nn.Parameter(torch.ones(D_MODEL))
            layer.gate = torch.nn.Linear(D_MODEL, D_FF, bias=False)
            layer.up = torch.nn.Linear(D_MODEL, D_FF, bias=False)
            layer.down = torch.nn.Linear(D_FF, D_MODEL, bias=False)
            layer.norm2 = torch.nn.Parameter(torch.ones(D_MODEL))
            self.layers.append(layer)
        self.final_norm = torch.nn.Parameter(torch.ones(D_MODEL))

    def init_weights(self, generator):
        """GPT-2's initialisation: N(0, 0.02), residual outputs scaled down by
        sqrt(2 * layers)."""
        std = 0.02
        with torch.no_grad():
            self.tokens.normal_(0.0, std, generator=generator)
            for layer in self.layers:
                for lin in (layer.q, layer.k, layer.v, layer.gate, layer.up):
                    lin.weight.normal_(0.0, std, generator=generator)
                for lin in (layer.o, layer.down):
                    lin.weight.normal_(0.0, std / math.sqrt(2 * LAYERS), generator=generator)

    def tmc_tensors(self):
        """name -> parameter, in `tmc manifest` order."""
        out = {"embed.tokens": self.tokens}
        for i, layer in enumerate(self.layers):
            p = f"decoder.layers.{i}."
            for name in ("q", "k", "v", "o"):
                out[p + f"self_attn.{name}.weight"] = getattr(layer, name).weight
            out[p + "norm1.weight"] = layer.norm1
            out[p + "ffn.gate.weight"] = layer.gate.weight
            out[p + "ffn.up.weight"] = layer.up.weight
            out[p + "ffn.down.weight"] = layer.down.weight
            out[p + "norm2.weight"] = layer.norm2
        out["decoder.final_norm.weight"] = self.final_norm
        return out

    def load_tmc(self, tensors):
        """Copies a {name: tensor} dict (all names of tmc_tensors) in."""
        own = self.tmc_tensors()
        if set(own) != set(tensors):
            raise ValueError(f"tensor names differ: {sorted(set(own) ^ set(tensors))}")
        with torch.no_grad():
            for name, param in own.items():
                param.copy_(torch.tensor(np.array(tensors[name]), dtype=param.dtype))

    @staticmethod
    def rmsnorm(x, weight):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight

    @staticmethod
    def rope(x, cos, sin):
        # x: [batch, heads, seq, head_dim]; dimension i pairs with i + head_dim/2.
        half = HEAD_DIM // 2
        a, b = x[..., :half], x[..., half:]
        return torch.cat((a * cos - b * sin, b * cos + a * sin), dim=-1)

    def forward(self, ids):
        """ids: [batch, seq] int64 -> logits [batch, seq, VOCAB]."""
        batch, seq = ids.shape
        dtype = self.tokens.dtype
        positions = torch.arange(seq, dtype=torch.float64)
        inv_freq = ROPE_THETA ** (-2.0 * torch.arange(HEAD_DIM // 2, dtype=torch.float64) / HEAD_DIM)
        angles = positions[:, None] * inv_freq[None, :]
        cos, sin = angles.cos().to(dtype), angles.sin().to(dtype)
        causal = torch.ones(seq, seq, dtype=torch.bool).tril()

        x = self.tokens[ids]
        for layer in self.layers:
            h = self.rmsnorm(x, layer.norm1)
            q, k, v = (
                lin(h).view(batch, seq, HEADS, HEAD_DIM).transpose(1, 2)
                for lin in (layer.q, layer.k, layer.v)
            )
            q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(HEAD_DIM)
            scores = scores.masked_fill(~causal, float("-inf"))
            attn = scores.softmax(-1) @ v
            x = x + layer.o(attn.transpose(1, 2).reshape(batch, seq, D_MODEL))
            h = self.rmsnorm(x, layer.norm2)
            x = x + layer.down(F.silu(layer.gate(h)) * layer.up(h))
        x = self.rmsnorm(x, self.final_norm)
        return x @ self.tokens.t()


def greedy(model, prompt_ids, max_new):
    """Greedy continuation by full recomputation; returns (new ids, smallest
    gap between the best and second-best logit along the way)."""
    ids = list(prompt_ids)
    smallest_gap = math.inf
    with torch.no_grad():
        for _ in range(max_new):
            logits = model(torch.tensor([ids]))[0, -1]
            top = torch.topk(logits, 2)
            smallest_gap = min(smallest_gap, float(top.values[0] - top.values[1]))
            ids.append(int(top.indices[0]))
    return ids[len(prompt_ids):], smallest_gap


# --- safetensors (the format is an 8-byte header length, JSON, raw data) -----

_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64}


def save_safetensors(path, tensors, dtype="F16"):
    """tensors: {name: torch tensor or array}, written in the given order."""
    header, blobs, offset = {}, [], 0
    for name, value in tensors.items():
        array = np.ascontiguousarray(
            torch.as_tensor(value).detach().cpu().numpy().astype(_DTYPES[dtype])
        )
        data = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # keep the data 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def load_safetensors(path):
    """{name: numpy array} in the file's own dtype."""
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    header.pop("__metadata__", None)
    base = 8 + length
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        array = np.frombuffer(raw[base + begin:base + end], dtype=_DTYPES[info["dtype"]])
        out[name] = array.reshape(info["shape"])
    return out


# --- the tokenizer ------------------------------------------------------------

def bytes_to_unicode():
    """GPT-2's map from bytes to printable stand-in characters."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) +
                 list(range(0xAE, 0x100)))
    table, extra = {}, 256
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(extra)
            extra += 1
    return table


# JavaScript's \s, which the runtime's pre-tokenizer (a port of gpt-3-encoder) uses.
_JS_SPACE = set("\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | {
    chr(c) for c in range(0x2000, 0x200B)}


def _char_class(ch):
    category = unicodedata.category(ch)
    if category[0] == "L":
        return "L"
    if category[0] == "N":
        return "N"
    if ch in _JS_SPACE:
        return "S"
    return "O"


def pretokenize(text):
    """GPT-2's regex  's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+|
    ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+  (Python's re lacks \\p{..}), worked out
    as runtime/bpe_tokenizer.cpp's matchEnd does."""
    pieces, pos, n = [], 0, len(text)

    def run_end(p, cls):
        while p < n and _char_class(text[p]) == cls:
            p += 1
        return p

    while pos < n:
        end = None
        if text[pos] == "'":
            for suffix in ("s", "t", "re", "ve", "m", "ll", "d"):
                if text.startswith(suffix, pos + 1):
                    end = pos + 1 + len(suffix)
                    break
        if end is None and text[pos] == " " and pos + 1 < n and _char_class(text[pos + 1]) != "S":
            end = run_end(pos + 1, _char_class(text[pos + 1]))
        if end is None and _char_class(text[pos]) != "S":
            end = run_end(pos, _char_class(text[pos]))
        if end is None:
            end = run_end(pos, "S")
            if end < n and end - pos >= 2:
                end -= 1  # \s+(?!\S) leaves the last space to the next word
        pieces.append(text[pos:end])
        pos = end
    return pieces


class Tokenizer:
    """Byte-level BPE: ids 0..255 are the bytes, merges add the rest."""

    def __init__(self, merges):
        """merges: list of (left string, right string) in the byte-to-unicode
        alphabet, by rank."""
        self.byte_char = bytes_to_unicode()
        self.vocab = {self.byte_char[b]: b for b in range(256)}
        self.ranks = {}
        for rank, (left, right) in enumerate(merges):
            self.vocab.setdefault(left + right, len(self.vocab))
            self.ranks[(left, right)] = rank  # a repeated pair keeps its later rank
        self.merges = list(merges)
        self.id_bytes = {}
        char_byte = {c: b for b, c in self.byte_char.items()}
        for token, i in self.vocab.items():
            self.id_bytes[i] = bytes(char_byte[c] for c in token)
        self._cache = {}

    @classmethod
    def load(cls, directory):
        with open(os.path.join(directory, "vocab.bpe"), encoding="utf-8") as f:
            lines = f.read().split("\n")
        merges = [tuple(line.split(" ")) for line in lines[1:] if line]
        tok = cls(merges)
        with open(os.path.join(directory, "encoder.json"), encoding="utf-8") as f:
            if json.load(f) != tok.vocab:
                raise ValueError(f"{directory}: encoder.json does not match vocab.bpe")
        return tok

    def save(self, directory):
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "encoder.json"), "w", encoding="utf-8") as f:
            json.dump(self.vocab, f, ensure_ascii=False)
        with open(os.path.join(directory, "vocab.bpe"), "w", encoding="utf-8") as f:
            f.write("#version: 0.2\n")
            for left, right in self.merges:
                f.write(f"{left} {right}\n")

    def _encode_piece(self, piece):
        word = [self.byte_char[b] for b in piece.encode("utf-8")]
        while len(word) > 1:
            pairs = [(self.ranks.get((word[i], word[i + 1]), math.inf), i)
                     for i in range(len(word) - 1)]
            rank, _ = min(pairs)
            if rank == math.inf:
                break
            left, right = self.merges[rank]
            merged, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and word[i] == left and word[i + 1] == right:
                    merged.append(left + right)
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            word = merged
        return [self.vocab[s] for s in word]

    def encode(self, text):
        ids = []
        for piece in pretokenize(text):
            if piece not in self._cache:
                self._cache[piece] = self._encode_piece(piece)
            ids.extend(self._cache[piece])
        return ids

    def decode(self, ids):
        return b"".join(self.id_bytes[i] for i in ids).decode("utf-8", errors="replace")


def train_bpe(text, vocab_size):
    """Learns merges until the vocabulary has vocab_size tokens: the most
    frequent adjacent pair within pre-tokenized pieces first, ties to the
    smallest pair (deterministic)."""
    byte_char = bytes_to_unicode()
    counts = Counter(pretokenize(text))
    words = [[byte_char[b] for b in piece.encode("utf-8")] for piece in counts]
    freqs = list(counts.values())
    pair_count, pair_words = Counter(), {}
    for w, (word, freq) in enumerate(zip(words, freqs)):
        for pair in zip(word, word[1:]):
            pair_count[pair] += freq
            pair_words.setdefault(pair, set()).add(w)
    heap = [(-c, pair) for pair, c in pair_count.items()]
    heapq.heapify(heap)
    merges, tokens = [], set(byte_char.values())
    while len(tokens) < vocab_size and heap:
        negative, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -negative or negative == 0:
            continue  # stale entry
        merges.append(pair)
        tokens.add(pair[0] + pair[1])
        changed = set()
        for w in pair_words.pop(pair, ()):
            word, freq = words[w], freqs[w]
            for p in zip(word, word[1:]):
                pair_count[p] -= freq
                changed.add(p)
            merged, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
                    merged.append(pair[0] + pair[1])
                    i += 2
                else:
                    merged.append(word[i])
                    i += 1
            words[w] = merged
            for p in zip(merged, merged[1:]):
                pair_count[p] += freq
                pair_words.setdefault(p, set()).add(w)
                changed.add(p)
        for p in changed:
            if pair_count[p] > 0:
                heapq.heappush(heap, (-pair_count[p], p))
            else:
                pair_count.pop(p, None)
    return Tokenizer(merges)
