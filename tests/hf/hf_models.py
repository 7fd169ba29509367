#!/usr/bin/python3
# hf_models.py - Hugging Face model folders and a float64 reference of them.
#
#   hf_models.py write KIND DIR [--seed S] [--dtype float32|float16|bfloat16]
#                               [--shards N] [--legacy-names]
#   hf_models.py run DIR --tokens 1,2,3 [--lengths N] [--segments 0,0,1] -o OUT.npy
#   hf_models.py greedy DIR --tokens 1,2,3 [--steps 32]
#
# `write` makes a folder as transformers' save_pretrained would for KIND
# (hf_configs.KINDS: gpt2, bert, bert-cls, llama, llama-tied, mistral,
# qwen2, qwen2-window) with random weights from the seed: config.json, and
# model.safetensors or N shards with model.safetensors.index.json.
# --legacy-names writes an older published checkpoint's config and names
# instead: gpt2 as openai-community/gpt2 (a 2019 config without n_inner and
# other later fields; no "transformer." prefix), bert as bert-base-uncased
# (BertForMaskedLM, "bert." prefix, LayerNorm gamma/beta, the pretraining
# heads "cls.*").
# `run` loads a folder (any of the above) into the reference model, written
# from Hugging Face's modeling code with the same module names (hf_gpt2,
# hf_bert, hf_llama), and writes its output for one sequence as float64
# .npy: [1, T, vocab] logits of a causal LM, [1, T, hidden] of BertModel,
# [1, 1, num_labels] of BertForSequenceClassification. --lengths N makes
# positions N.. padding (attention_mask 0); their rows are written anyway.
# `greedy` prints the greedy continuation's ids, comma-separated (the
# argmax of the float64 logits, the whole sequence recomputed each step).
#
# Only torch and numpy (Debian's python3-torch, python3-numpy): neither
# transformers nor safetensors is needed.

import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_checkpoint  # noqa: E402
import hf_configs  # noqa: E402

KINDS = tuple(hf_configs.KINDS)
write_folder = hf_checkpoint.write_folder
load_folder = hf_checkpoint.load_folder


def is_causal_lm(config):
    return config["architectures"][0].endswith("ForCausalLM") or \
        config["architectures"][0] == "GPT2LMHeadModel"


def forward(model, tokens, lengths=None, segments=None):
    """The model's output for one sequence, float64 numpy [1, rows, width]."""
    input_ids = torch.tensor([tokens], dtype=torch.int64)
    # Only BERT reads the attention mask. A causal LM's rows before the
    # padding never see it, and its rows after it are not compared.
    mask = None
    if lengths is not None:
        mask = (torch.arange(len(tokens)) < lengths).to(torch.int64).unsqueeze(0)
    token_types = None
    if segments is not None:
        if len(segments) != len(tokens):
            raise ValueError(f"{len(segments)} segments for {len(tokens)} tokens")
        token_types = torch.tensor([segments], dtype=torch.int64)
    with torch.no_grad():
        return model(input_ids, token_type_ids=token_types, attention_mask=mask).numpy()


def greedy(model, tokens, steps):
    """(generated ids, the smallest margin between a step's best and
    second-best logit relative to that step's max |logit|). A small margin
    is a near tie that f32 rounding could flip."""
    sequence, margin = list(tokens), float("inf")
    for _ in range(steps):
        logits = forward(model, sequence)[0, -1]
        top2 = np.sort(logits)[-2:]
        margin = min(margin, (top2[1] - top2[0]) / np.max(np.abs(logits)))
        sequence.append(int(np.argmax(logits)))
    return sequence[len(tokens):], margin


def parse_ids(text):
    return [int(t) for t in text.split(",") if t.strip()]


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Hugging Face model folders and a float64 reference of them")
    commands = parser.add_subparsers(dest="command", required=True)
    write = commands.add_parser("write", help="write a Hugging Face model folder")
    write.add_argument("kind", choices=KINDS)
    write.add_argument("dir")
    write.add_argument("--seed", type=int, default=0)
    write.add_argument("--dtype", choices=hf_configs.DTYPES, default="float32")
    write.add_argument("--shards", type=int, default=1)
    write.add_argument("--legacy-names", action="store_true",
                       help="older published names (gpt2: no prefix; bert: bert-base-uncased's)")
    run = commands.add_parser("run", help="write the reference output of a folder")
    run.add_argument("dir")
    run.add_argument("--tokens", required=True)
    run.add_argument("--lengths", type=int)
    run.add_argument("--segments")
    run.add_argument("-o", "--output", required=True)
    gen = commands.add_parser("greedy", help="print the greedy continuation of a folder's LM")
    gen.add_argument("dir")
    gen.add_argument("--tokens", required=True)
    gen.add_argument("--steps", type=int, default=32)
    args = parser.parse_args(argv)

    if args.command == "write":
        files = write_folder(args.kind, args.dir, args.seed, args.dtype, args.shards,
                             args.legacy_names)
        print(f"wrote {args.dir}: config.json, {', '.join(files)}")
        return 0
    config, model = load_folder(args.dir)
    tokens = parse_ids(args.tokens)
    if args.command == "run":
        segments = parse_ids(args.segments) if args.segments else None
        output = forward(model, tokens, args.lengths, segments)
        np.save(args.output, output)
        print(f"wrote {args.output}: float64 {list(output.shape)}")
        return 0
    if not is_causal_lm(config):
        parser.error(f"{args.dir} holds a {config['architectures'][0]}, not a causal LM")
    ids, _ = greedy(model, tokens, args.steps)
    print(",".join(str(i) for i in ids))
    return 0


if __name__ == "__main__":
    sys.exit(main())
