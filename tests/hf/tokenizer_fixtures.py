#!/usr/bin/python3
# tokenizer_fixtures.py - tokenizer.json files as Hugging Face writes them, and
# a reference encoder/decoder of the SentencePiece-style one.
#
#   tokenizer_fixtures.py OUT_DIR
#   tokenizer_fixtures.py encode-sp DIR (TEXT | --file PATH) [--no-special]
#   tokenizer_fixtures.py decode-sp DIR IDS [--keep-special]
#
# OUT_DIR gets four folders, each holding one tokenizer.json, serialized as the
# `tokenizers` library's Tokenizer.save writes it (serde_json pretty: 2-space
# indent, non-ASCII unescaped, no final newline):
#   gpt2/       examples/tokenizers/gpt2 (encoder.json + vocab.bpe) as
#               transformers' GPT2Converter builds it: ByteLevel pre-tokenizer,
#               post-processor and decoder; BPE with merges as ["a", "b"] pairs
#               (tokenizers 0.20+); <|endoftext|> (50256) an added special token.
#   wordpiece/  examples/tokenizers/wordpiece-tiny/vocab.txt as BertConverter
#               builds it: BertNormalizer (lowercase), BertPreTokenizer,
#               WordPiece, TemplateProcessing [CLS] $A [SEP], WordPiece decoder.
#   sentencepiece/  a SentencePiece-style BPE laid out as Llama 2's published
#               tokenizer.json (written by tokenizers 0.13-0.15): normalizer
#               Sequence[Prepend "▁", Replace " " -> "▁"], no pre-tokenizer, BPE
#               with byte_fallback and fuse_unk, merges as legacy "a b" strings
#               and no ignore_merges field; decoder Sequence[Replace "▁" -> " ",
#               ByteFallback, Fuse, Strip 1 leading " "]; post-processor <s> $A.
#               Vocabulary: <unk>, <s>, </s>, <0x00>..<0xFF>, 300 merges learnt
#               here from examples/kjv/heldout.txt, then its characters.
#   sentencepiece-metaspace/  the same model as newer Llama/Mistral files have
#               it (LlamaConverter with legacy=False): no normalizer,
#               pre-tokenizer Metaspace(prepend_scheme "first", split false);
#               written by tokenizers 0.20+ (merges as pairs, ignore_merges).
# encode-sp and decode-sp read either sentencepiece folder's tokenizer.json and
# compute what the tokenizers library's Tokenizer.encode(text) (with
# add_special_tokens=True: the <s>) and Tokenizer.decode(ids) (with
# skip_special_tokens=True) return; encode-sp prints the ids comma-separated,
# decode-sp prints the text with no newline added. The BPE is word.rs's
# merge_all: a heap of (rank, position), lowest rank first, the leftmost among
# equal ranks, over the whole normalized text as one word, starting from its
# characters (a character outside the vocabulary becomes one <0xXX> token per
# UTF-8 byte). Only the standard library.

import heapq
import json
import os
import re
import sys
from collections import Counter

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SPACE = "\u2581"  # ▁
SP_MERGES = 300


def dump(path, tokenizer):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(tokenizer, indent=2, ensure_ascii=False))


def added(token_id, content, normalized):
    """An added_tokens entry, fields in the library's order."""
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False,
            "rstrip": False, "normalized": normalized, "special": True}


def template(single, pair, specials):
    """TemplateProcessing from "X:0 $A:0"-style strings and {token: id}."""
    def pieces(text):
        out = []
        for item in text.split():
            name, type_id = item.split(":")
            out.append({"Sequence": {"id": name[1:], "type_id": int(type_id)}} if name[0] == "$"
                       else {"SpecialToken": {"id": name, "type_id": int(type_id)}})
        return out
    return {"type": "TemplateProcessing", "single": pieces(single), "pair": pieces(pair),
            "special_tokens": {t: {"id": t, "ids": [i], "tokens": [t]}
                               for t, i in sorted(specials.items())}}


def bpe_model(vocab, merges, unk=None, prefix=None, suffix=None, fuse_unk=False,
              byte_fallback=False, ignore_merges=False, legacy=False):
    """The BPE model as tokenizers serializes it: vocab by id; merges as pairs,
    or (legacy, before 0.20) as "a b" strings without ignore_merges."""
    model = {"type": "BPE", "dropout": None, "unk_token": unk,
             "continuing_subword_prefix": prefix, "end_of_word_suffix": suffix,
             "fuse_unk": fuse_unk, "byte_fallback": byte_fallback,
             "ignore_merges": ignore_merges}
    if legacy:
        del model["ignore_merges"]
    model["vocab"] = dict(sorted(vocab.items(), key=lambda item: item[1]))
    model["merges"] = [f"{a} {b}" if legacy else [a, b] for a, b in merges]
    return model


def tokenizer(added_tokens, normalizer, pre_tokenizer, post_processor, decoder, model):
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": added_tokens, "normalizer": normalizer,
            "pre_tokenizer": pre_tokenizer, "post_processor": post_processor,
            "decoder": decoder, "model": model}


def gpt2():
    folder = os.path.join(ROOT, "examples", "tokenizers", "gpt2")
    vocab = json.load(open(os.path.join(folder, "encoder.json"), encoding="utf-8"))
    # GPT2Tokenizer: split("\n")[1:-1], each line split on whitespace.
    lines = open(os.path.join(folder, "vocab.bpe"), encoding="utf-8").read().split("\n")[1:-1]
    merges = list(dict.fromkeys(tuple(line.split()) for line in lines))
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": True}
    # GPT2Tokenizer's <|endoftext|> is an AddedToken(lstrip=False, rstrip=False):
    # normalized stays true when it is made special.
    return tokenizer([added(vocab["<|endoftext|>"], "<|endoftext|>", True)], None, byte_level,
                     dict(byte_level, add_prefix_space=True, trim_offsets=False),
                     dict(byte_level, add_prefix_space=True),
                     bpe_model(vocab, merges, prefix="", suffix=""))


def wordpiece():
    path = os.path.join(ROOT, "examples", "tokenizers", "wordpiece-tiny", "vocab.txt")
    vocab = {}
    for index, line in enumerate(open(path, encoding="utf-8").readlines()):
        vocab[line.rstrip("\n")] = index
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return tokenizer(
        sorted((added(vocab[t], t, False) for t in specials), key=lambda t: t["id"]),
        {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
         "strip_accents": None, "lowercase": True},
        {"type": "BertPreTokenizer"},
        template("[CLS]:0 $A:0 [SEP]:0", "[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
                 {"[CLS]": vocab["[CLS]"], "[SEP]": vocab["[SEP]"]}),
        {"type": "WordPiece", "prefix": "##", "cleanup": True},
        {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
         "max_input_chars_per_word": 100, "vocab": vocab})


def train_sp(lines, count):
    """(vocab, merges): the most frequent adjacent pair within "▁word" chunks
    of the normalized lines first, ties to the smallest pair."""
    chunks = Counter()
    for line in lines:
        if line:
            chunks.update(re.findall(f"{SPACE}[^{SPACE}]*|[^{SPACE}]+",
                                     SPACE + line.replace(" ", SPACE)))
    chars = Counter()
    for chunk, n in chunks.items():
        for ch in chunk:
            chars[ch] += n
    words = {tuple(chunk): n for chunk, n in chunks.items()}
    merges = []
    for _ in range(count):
        pairs = Counter()
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += n
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        merged = {}
        for word, n in words.items():
            out, i = [], 0
            while i < len(word):
                if word[i:i + 2] == best:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + n
        words = merged
    pieces = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    pieces += [a + b for a, b in merges] + sorted(chars, key=lambda c: (-chars[c], c))
    vocab = {}
    for piece in pieces:
        vocab.setdefault(piece, len(vocab))
    return vocab, merges


def sentencepiece(metaspace):
    text = open(os.path.join(ROOT, "examples", "kjv", "heldout.txt"), encoding="utf-8").read()
    vocab, merges = train_sp(text.split("\n"), SP_MERGES)
    replace = {"type": "Replace", "pattern": {"String": SPACE}, "content": " "}
    decoder = {"type": "Sequence", "decoders": [
        replace, {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    normalizer = None if metaspace else {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": SPACE},
        {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]}
    pre = ({"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first", "split": False}
           if metaspace else None)
    return tokenizer([added(i, t, False) for i, t in enumerate(["<unk>", "<s>", "</s>"])],
                     normalizer, pre, template("<s>:0 $A:0", "<s>:0 $A:0 <s>:1 $B:1", {"<s>": 1}),
                     decoder, bpe_model(vocab, merges, unk="<unk>", fuse_unk=True,
                                        byte_fallback=True, legacy=not metaspace))


class SentencePieceBpe:
    """The tokenizers library's encode and decode for the sentencepiece
    fixtures' components (anything else is refused)."""

    def __init__(self, data):
        model = data["model"]
        if model.get("type", "BPE") != "BPE" or model.get("dropout") or \
                model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
            raise ValueError("only a BPE without dropout, prefix or suffix")
        self.vocab = model["vocab"]
        self.tokens = {i: t for t, i in self.vocab.items()}
        self.unk = model.get("unk_token")
        self.fuse_unk = model.get("fuse_unk", False)
        self.byte_fallback = model.get("byte_fallback", False)
        self.ignore_merges = model.get("ignore_merges", False)
        self.merges = {}  # (left id, right id) -> (rank, merged id); a repeat keeps the last
        for rank, merge in enumerate(model["merges"]):
            a, b = merge.split(" ") if isinstance(merge, str) else merge
            self.merges[(self.vocab[a], self.vocab[b])] = (rank, self.vocab[a + b])
        self.added = {}
        for token in data["added_tokens"]:
            if token["normalized"] or token["lstrip"] or token["rstrip"] or token["single_word"]:
                raise ValueError(f"added token {token['content']!r}: only plain unnormalized ones")
            self.added[token["content"]] = token
            self.tokens[token["id"]] = token["content"]
        self.normalizers = self._list(data["normalizer"], "normalizers")
        self.pre_tokenizers = self._list(data["pre_tokenizer"], "pretokenizers")
        self.post = data["post_processor"]
        self.decoders = self._list(data["decoder"], "decoders")

    @staticmethod
    def _list(component, key):
        if component is None:
            return []
        return component[key] if component["type"] == "Sequence" else [component]

    def _split_added(self, text):
        """[(start, piece, id or None)]: leftmost-longest added tokens."""
        out, start, i = [], 0, 0
        while i < len(text):
            match = max((t for t in self.added if text.startswith(t, i)), key=len, default=None)
            if match is None:
                i += 1
                continue
            if start < i:
                out.append((start, text[start:i], None))
            out.append((i, match, self.added[match]["id"]))
            start = i = i + len(match)
        if start < len(text) or not text:
            out.append((start, text[start:], None))
        return out

    def _normalize(self, piece, start):
        for n in self.normalizers + self.pre_tokenizers:
            if n["type"] == "Prepend":
                piece = n["prepend"] + piece if piece else piece
            elif n["type"] == "Replace" and "String" in n["pattern"]:
                piece = piece.replace(n["pattern"]["String"], n["content"])
            elif n["type"] == "Metaspace" and not n.get("split", True):
                piece = piece.replace(" ", n["replacement"])
                scheme = n.get("prepend_scheme", "always")
                if piece and not piece.startswith(n["replacement"]) and (
                        scheme == "always" or (scheme == "first" and start == 0)):
                    piece = n["replacement"] + piece
            else:
                raise ValueError(f"unsupported normalizer or pre-tokenizer {n}")
        return piece

    def _word(self, word):
        """model.rs merge_word: characters, byte fallback, unk, then merge_all."""
        if not word:
            return []
        if self.ignore_merges and word in self.vocab:
            return [self.vocab[word]]
        symbols, unk = [], None  # symbols: [id, prev, next, byte length]

        def add(token_id, length):
            if symbols:
                symbols[-1][2] = len(symbols)
            symbols.append([token_id, len(symbols) - 1, -1, length])
        for ch in word:
            length = len(ch.encode("utf-8"))
            if ch in self.vocab:
                if unk:
                    add(*unk)
                    unk = None
                add(self.vocab[ch], length)
                continue
            codes = [f"<0x{b:02X}>" for b in ch.encode("utf-8")]
            if self.byte_fallback and all(c in self.vocab for c in codes):
                for c in codes:
                    add(self.vocab[c], 1)
                continue
            if self.unk is not None:
                if unk and self.fuse_unk:
                    unk = (unk[0], unk[1] + length)
                else:
                    if unk:
                        add(*unk)
                    unk = (self.vocab[self.unk], length)
        if unk:
            add(*unk)
        # word.rs merge_all: lowest rank first, then lowest position.
        heap = [(self.merges[(a[0], b[0])][0], pos, self.merges[(a[0], b[0])][1])
                for pos, (a, b) in enumerate(zip(symbols, symbols[1:]))
                if (a[0], b[0]) in self.merges]
        heapq.heapify(heap)
        while heap:
            _, pos, new_id = heapq.heappop(heap)
            left = symbols[pos]
            if left[3] == 0 or left[2] == -1:
                continue
            right = symbols[left[2]]
            if self.merges.get((left[0], right[0]), (0, None))[1] != new_id:
                continue  # stale entry
            left[0], left[3], left[2] = new_id, left[3] + right[3], right[2]
            right[3] = 0
            if right[2] != -1:
                symbols[right[2]][1] = pos
            if left[1] >= 0 and (symbols[left[1]][0], new_id) in self.merges:
                rank, merged = self.merges[(symbols[left[1]][0], new_id)]
                heapq.heappush(heap, (rank, left[1], merged))
            if left[2] != -1 and (new_id, symbols[left[2]][0]) in self.merges:
                rank, merged = self.merges[(new_id, symbols[left[2]][0])]
                heapq.heappush(heap, (rank, pos, merged))
        return [s[0] for s in symbols if s[3] != 0]

    def encode(self, text, add_special_tokens=True):
        ids = []
        for start, piece, token_id in self._split_added(text):
            ids += [token_id] if token_id is not None else self._word(self._normalize(piece, start))
        if not add_special_tokens or self.post is None:
            return ids
        if self.post["type"] != "TemplateProcessing":
            raise ValueError(f"unsupported post-processor {self.post['type']}")
        out = []
        for piece in self.post["single"]:
            special = piece.get("SpecialToken")
            out += self.post["special_tokens"][special["id"]]["ids"] if special else ids
        return out

    def decode(self, ids, skip_special_tokens=True):
        tokens = [self.tokens[i] for i in ids if i in self.tokens and not (
            skip_special_tokens and self.added.get(self.tokens[i], {}).get("special"))]
        for d in self.decoders:
            if d["type"] == "Replace" and "String" in d["pattern"]:
                tokens = [t.replace(d["pattern"]["String"], d["content"]) for t in tokens]
            elif d["type"] == "ByteFallback":
                tokens = _byte_fallback(tokens)
            elif d["type"] == "Fuse":
                tokens = ["".join(tokens)]
            elif d["type"] == "Strip":
                tokens = [_strip(t, d["content"], d["start"], d["stop"]) for t in tokens]
            else:
                raise ValueError(f"unsupported decoder {d}")
        return "".join(tokens)


def _byte_fallback(tokens):
    """Runs of <0xXX> tokens become their bytes as UTF-8, or one U+FFFD per
    byte when they are not valid UTF-8."""
    out, run = [], []

    def flush():
        if run:
            try:
                out.append(bytes(run).decode("utf-8"))
            except UnicodeDecodeError:
                out.extend(["\ufffd"] * len(run))
            run.clear()
    for token in tokens:
        if len(token.encode("utf-8")) == 6 and token.startswith("<0x") and token.endswith(">") \
                and re.fullmatch(r"\+?[0-9a-fA-F]{1,2}", token[3:5]):
            run.append(int(token[3:5], 16))
        else:
            flush()
            out.append(token)
    flush()
    return out


def _strip(token, content, start, stop):
    begin, end = 0, len(token)
    while begin < min(start, len(token)) and token[begin] == content:
        begin += 1
    while stop and end > begin and len(token) - end < stop and token[end - 1] == content:
        end -= 1
    return token[begin:end]


def load(directory):
    with open(os.path.join(directory, "tokenizer.json"), encoding="utf-8") as f:
        return SentencePieceBpe(json.load(f))


def main(argv):
    if len(argv) >= 3 and argv[0] == "encode-sp":
        text = argv[2]
        if text == "--file":
            text = open(argv[3], encoding="utf-8").read()
        text.encode("utf-8")  # refuses text that is not Unicode (lone surrogates)
        ids = load(argv[1]).encode(text, add_special_tokens="--no-special" not in argv)
        print(",".join(map(str, ids)))
    elif len(argv) >= 3 and argv[0] == "decode-sp":
        ids = [int(i) for i in argv[2].split(",") if i.strip()]
        text = load(argv[1]).decode(ids, skip_special_tokens="--keep-special" not in argv)
        sys.stdout.buffer.write(text.encode("utf-8"))
    elif len(argv) == 1 and not argv[0].startswith("-"):
        out = argv[0]
        for name, make in (("gpt2", gpt2), ("wordpiece", wordpiece),
                           ("sentencepiece", lambda: sentencepiece(False)),
                           ("sentencepiece-metaspace", lambda: sentencepiece(True))):
            dump(os.path.join(out, name, "tokenizer.json"), make())
        print(f"wrote {out}/{{gpt2,wordpiece,sentencepiece,sentencepiece-metaspace}}"
              "/tokenizer.json")
    else:
        sys.stderr.write("usage: tokenizer_fixtures.py OUT_DIR | encode-sp DIR (TEXT | --file PATH)"
                         " [--no-special] | decode-sp DIR IDS [--keep-special]\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
