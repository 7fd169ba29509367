#!/usr/bin/python3
"""The trained KJV decoder (examples/kjv), compiled by tmc, against PyTorch.

1. `tmc manifest --json` lists exactly the tensors of the committed weight file
   and of the PyTorch model (names, shapes, dtypes, in order).
2. The executable's tokenizer (runtime/bpe_tokenizer.cpp) encodes a few prompts
   to the same ids as the Python tokenizer (kjv_model.Tokenizer).
3. Its logits for the prompt match PyTorch's to 1e-5 (relative), and
4. its greedy continuation of a fixed prompt (32 new tokens,
   decoded with its KV caches) equals PyTorch's, computed in float64 by full
   recomputation from the same weights, token for token, and
5. the logits of every decoding step (its --output with --max-new: the
   prompt's rows, then one per generated token) match PyTorch's, teacher-forced
   with the executable's tokens, to the same tolerance as the prompt's.
6. Its perplexity of the held-out text (examples/kjv/heldout.txt, `--perplexity`)
   equals PyTorch's over the same windows (max_seq tokens advancing by
   max_seq / 2, each token scored once: docs/architecture.md), to 1e-5 relative.
Exit status 0 on agreement, 1 with the evidence otherwise.
"""
import argparse
import json
import math
import os
import subprocess
import sys

import numpy as np
import torch

PROMPT = "And God said"
# The max error relative to the largest logit, of the prompt's logits and of
# every decoding step's: the parity suite's 1e-5 (tests/parity); measured
# 4.6e-7 for the prompt and 5.2e-7 for the decoding steps (f32, host).
TOLERANCE = 1e-5
MAX_NEW = 32
# Prompts whose encoding must agree: contractions, digits, punctuation runs,
# runs of spaces and a newline exercise every branch of the pre-tokenizer.
TOKENIZER_PROMPTS = [
    PROMPT,
    "In the beginning God created the heaven and the earth.",
    "Thou shalt not kill.  Ye've 12 tribes; the LORD's house, O Israel!!\n  and it's 'so'",
]


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited with {result.returncode}:\n{result.stderr}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tmc", required=True)
    parser.add_argument("--source", required=True, help="the repository root")
    parser.add_argument("--work", required=True, help="a directory for the executable")
    args = parser.parse_args()
    example = os.path.join(args.source, "examples", "kjv")
    sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
    sys.path.insert(0, example)
    import kjv_model as km

    spec = os.path.join(example, "kjv.tm")
    weights_path = os.path.join(example, "kjv.safetensors")
    tokenizer_dir = os.path.join(example, "tokenizer")

    # 1. One list of tensors for the compiler, the file and the PyTorch model.
    manifest = [(t["name"], t["shape"], t["dtype"])
                for t in json.loads(run([args.tmc, "manifest", spec, "--json"]))]
    weights = km.load_safetensors(weights_path)
    in_file = [(name, list(a.shape), "F32" if a.dtype.name == "float32" else a.dtype.name)
               for name, a in weights.items()]
    model = km.Decoder()
    in_torch = [(name, list(p.shape), "F32") for name, p in model.tmc_tensors().items()]
    if manifest != in_file or manifest != in_torch:
        sys.exit(f"FAIL: tensors differ\nmanifest {manifest}\nfile {in_file}\ntorch {in_torch}")
    model.load_tmc(weights)
    model = model.double().eval()

    exe = os.path.join(args.work, "kjv")
    # native: the variant of host this CPU runs, alone (a third of the compile time).
    run([args.tmc, "compile", spec, "--target", "native", "-o", exe])
    tokenizer = km.Tokenizer.load(tokenizer_dir)

    # 2. The same prompt ids on both sides.
    for text in TOKENIZER_PROMPTS:
        out = json.loads(run([exe, "--weights", weights_path, "--tokenizer", tokenizer_dir,
                              "--prompt", text, "--max-new", "1", "--json"]))
        if out["prompt"] != tokenizer.encode(text):
            sys.exit(f"FAIL: {text!r} encodes to {out['prompt']} in the executable, "
                     f"{tokenizer.encode(text)} in Python")

    # 3. The prompt's logits, to TOLERANCE (a max error relative to the
    # largest logit): where greedy decoding disagrees, this says
    # whether the arithmetic or a near tie is to blame.
    prompt_ids = tokenizer.encode(PROMPT)
    npy = os.path.join(args.work, "kjv-prompt-logits.npy")
    run([exe, "--weights", weights_path, "--tokens", ",".join(map(str, prompt_ids)),
         "--output", npy])
    got = torch.from_numpy(np.load(npy)).double()
    with torch.no_grad():
        want = model(torch.tensor([prompt_ids]))
    error = float((got - want).abs().max() / want.abs().max())
    print(f"prompt logits: max error relative to the largest logit {error:.2e}")
    if got.shape != want.shape or not error <= TOLERANCE:
        sys.exit(f"FAIL: the prompt's logits differ (shape {list(got.shape)} vs "
                 f"{list(want.shape)}, relative error {error:.2e})")

    # 4. Greedy decoding, token for token.
    out = json.loads(run([exe, "--weights", weights_path, "--tokenizer", tokenizer_dir,
                          "--prompt", PROMPT, "--max-new", str(MAX_NEW), "--json"]))
    expected, gap = km.greedy(model, tokenizer.encode(PROMPT), MAX_NEW)
    print(f"prompt    {PROMPT!r} -> {out['prompt']}")
    print(f"tmc       {out['generated']}")
    print(f"pytorch   {expected}")
    print(f"text      {tokenizer.decode(expected)!r}")
    print(f"smallest gap between the top two logits along the way: {gap:.4f}")
    if out["generated"] != expected:
        first = next((i for i, (a, b) in enumerate(zip(out["generated"], expected)) if a != b),
                     min(len(out["generated"]), len(expected)))
        sys.exit(f"FAIL: the continuations differ from new token {first} on")

    # 5. Every decoding step's logits, value by value: rows P-1 .. P+G-1 of the
    # output (row P+k is the step at generated[k]'s position, from the caches;
    # the last is one step past the last token) against PyTorch recomputing the
    # prompt and the executable's tokens.
    npy = os.path.join(args.work, "kjv-decoding-logits.npy")
    decoded = json.loads(run([exe, "--weights", weights_path,
                              "--tokens", ",".join(map(str, prompt_ids)),
                              "--max-new", str(MAX_NEW), "--json", "--output", npy]))
    tokens = prompt_ids + decoded["generated"]
    got = torch.from_numpy(np.load(npy)).double()
    with torch.no_grad():
        want = model(torch.tensor([tokens]))
    if got.shape != want.shape:
        sys.exit(f"FAIL: --output with --max-new has shape {list(got.shape)}, expected "
                 f"{list(want.shape)} (prompt and generated rows)")
    p = len(prompt_ids)
    scale = float(want[0, p - 1:].abs().max())
    per_step = ((got[0, p - 1:] - want[0, p - 1:]).abs().max(dim=1).values / scale).tolist()
    prompt_error = float((got[0, :p] - want[0, :p]).abs().max() / want[0, :p].abs().max())
    error = max(per_step)
    print(f"decoding logits, {len(per_step)} steps: max error relative to the largest logit "
          f"{error:.2e} (prompt rows of the same output {prompt_error:.2e})")
    if not error <= TOLERANCE or not prompt_error <= TOLERANCE:
        first = next((s for s, e in enumerate(per_step) if not e <= TOLERANCE), None)
        sys.exit(f"FAIL: the decoding steps' logits differ: relative error {error:.2e} "
                 f"(first over {TOLERANCE} at step {first}), prompt rows {prompt_error:.2e}")
    print(f"PASS: {MAX_NEW} greedy tokens and {len(per_step)} decoding steps' logits agree")

    # 6. Perplexity of the held-out verses, windows as the contract says.
    heldout = os.path.join(example, "heldout.txt")
    got = json.loads(run([exe, "--weights", weights_path, "--tokenizer", tokenizer_dir,
                          "--perplexity", heldout, "--json"]))
    with open(heldout, encoding="utf-8") as f:
        ids = tokenizer.encode(f.read())
    want, scored, windows = torch_perplexity(model, ids, km.MAX_SEQ)
    error = abs(got["perplexity"] - want) / want
    print(f"perplexity of {len(ids)} held-out tokens: tmc {got['perplexity']:.6f} over "
          f"{got['scored_tokens']} tokens in {got['windows']} windows, PyTorch {want:.6f} over "
          f"{scored} in {windows}; relative difference {error:.2e}")
    if (got["text_tokens"], got["scored_tokens"], got["windows"]) != (len(ids), scored, windows) \
            or not error <= TOLERANCE:
        sys.exit("FAIL: the perplexities differ")
    print("PASS: the held-out perplexity agrees")


def torch_perplexity(model, ids, window):
    """exp(mean NLL) of every token after the first, each scored once: windows
    of `window` tokens starting every window // 2, each scoring the tokens
    past the previous window's end. Returns (perplexity, scored, windows)."""
    stride = max(1, window // 2)
    total, scored, windows, done, begin = 0.0, 0, 0, 1, 0
    while done < len(ids):
        end = min(begin + window, len(ids))
        with torch.no_grad():
            logp = model(torch.tensor([ids[begin:end]]))[0].log_softmax(-1)
        windows += 1
        for p in range(max(done, begin + 1), end):
            total -= float(logp[p - 1 - begin, ids[p]])
            scored += 1
        done, begin = end, begin + stride
    return math.exp(total / scored), scored, windows


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()
