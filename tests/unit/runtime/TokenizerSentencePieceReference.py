#!/usr/bin/python3
# TokenizerSentencePieceReference.py - writes the SentencePiece fixtures of
# TokenizerHfJsonTest.cpp:
#   hf-tokenizers/sentencepiece/tokenizer.json            Llama 2's layout
#   hf-tokenizers/sentencepiece-metaspace/tokenizer.json  newer Llama/Mistral's
#   TokenizerSentencePieceReference.json   the ids and texts of a corpus
# from tests/hf/tokenizer_fixtures.py, whose encoder and decoder port the
# `tokenizers` library's (word.rs merge_all, byte fallback, Prepend,
# Metaspace, added tokens). Run once, so the unit tests need no Python:
#   python3 tests/unit/runtime/TokenizerSentencePieceReference.py

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "hf"))
import tokenizer_fixtures  # noqa: E402


def main():
    variants = {"sentencepiece": False, "sentencepiece-metaspace": True}
    for name, metaspace in variants.items():
        tokenizer_fixtures.dump(os.path.join(HERE, "hf-tokenizers", name, "tokenizer.json"),
                                tokenizer_fixtures.sentencepiece(metaspace))
    with open(os.path.join(HERE, "TokenizerLlama3Reference.json"), encoding="utf-8") as f:
        texts = [c["text"] for c in json.load(f)["cases"]]
    with open(os.path.join(ROOT, "examples", "kjv", "heldout.txt"), encoding="utf-8") as f:
        texts += f.read().split("\n")[:40]
    texts += ["", " ", "  two spaces", "<s>In the beginning", "a</s>b <s> c", "<unk>",
              "tail space ", "\u2581already", "x\n\ny"]
    cases = []
    for text in texts:
        case = {"text": text}
        for name in variants:
            model = tokenizer_fixtures.load(os.path.join(HERE, "hf-tokenizers", name))
            ids = model.encode(text, add_special_tokens=False)
            case[name] = {"ids": ids, "decoded": model.decode(ids, skip_special_tokens=False)}
        cases.append(case)
    out = os.path.join(HERE, "TokenizerSentencePieceReference.json")
    with open(out, "w", encoding="utf-8") as f:
        f.write('{"source": "tests/hf/tokenizer_fixtures.py", "cases": [\n')
        f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
        f.write("\n]}\n")
    print(f"wrote {out}: {len(cases)} cases")


if __name__ == "__main__":
    main()
