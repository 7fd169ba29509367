#!/usr/bin/python3
"""Trains the small decoder of kjv.tm on the King James Bible and writes what
the compiled executable needs: tokenizer/encoder.json + tokenizer/vocab.bpe
(a byte-level BPE learnt here) and kjv.safetensors (f32, tmc's weight names).

The text comes from Debian's bible-kjv-text package, read through the `bible`
program of bible-kjv (see README.md). Everything is seeded; with the same torch
build and thread count a rerun writes the same files (the committed ones are
this script's defaults).

    /usr/bin/python3 examples/kjv/train.py   # about 15 minutes on one core
    /usr/bin/python3 examples/kjv/train.py --steps 50 --out /tmp/kjv   # a quick try

Debian's python3-torch multiplies matrices with the reference BLAS unless an
optimised one is installed; with libopenblas0-pthread training is ~20x faster.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kjv_model as km  # noqa: E402


def read_kjv(path):
    """The 31,102 verses, one per line, without book, chapter or verse numbers."""
    if path:
        with open(path, encoding="utf-8") as f:
            raw = f.read()
    else:
        # -l0: no line wrapping; the output is "Book N" headers and "  V text" lines.
        raw = subprocess.run(["bible", "-l0", "gen1:1-rev22:21"], check=True,
                             capture_output=True, text=True).stdout
    verses = [m.group(1) for m in re.finditer(r"^ +\d+ (.*)$", raw, re.MULTILINE)]
    if len(verses) != 31102:
        sys.exit(f"expected the 31102 verses of the KJV, found {len(verses)}")
    return "\n".join(verses) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=HERE, help="output directory (default: examples/kjv)")
    parser.add_argument("--text", help="the KJV as printed by `bible -l0 gen1:1-rev22:21`")
    parser.add_argument("--steps", type=int, default=2400)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--lr", type=float, default=4e-3)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (the committed weights used 1; others may "
                             "change the last bits)")
    parser.add_argument("--snapshot-every", type=int, default=0,
                        help="also write kjv-stepN.safetensors every N steps")
    parser.add_argument("--seed", type=int, default=1611)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    text = read_kjv(args.text)
    start = time.time()
    tokenizer = km.train_bpe(text, km.VOCAB)
    tokenizer.save(os.path.join(args.out, "tokenizer"))
    ids = torch.tensor(tokenizer.encode(text), dtype=torch.long)
    print(f"{len(text)} characters -> {len(ids)} tokens ({len(tokenizer.vocab)}-token BPE, "
          f"{time.time() - start:.0f} s)", flush=True)

    # The last 2% (the end of Revelation) is held out to report a validation loss.
    split = int(len(ids) * 0.98)
    train_ids, val_ids = ids[:split], ids[split:]
    context = km.MAX_SEQ
    generator = torch.Generator().manual_seed(args.seed)
    model = km.Decoder()
    model.init_weights(generator)
    params = sum(p.numel() for p in model.parameters())
    print(f"model: {params} parameters", flush=True)

    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=args.lr, betas=(0.9, 0.95))
    # Warm-up, then inverse-square-root decay: the rate never depends on the
    # total, so the snapshot written at step N (--snapshot-every) is exactly
    # what `--steps N` trains.
    warmup = 50

    def lr_at(step):
        return args.lr * min((step + 1) / warmup, math.sqrt(warmup / max(step, warmup)))

    def batch_of(source, size, gen):
        starts = torch.randint(0, len(source) - context - 1, (size,), generator=gen)
        rows = torch.stack([source[s:s + context + 1] for s in starts.tolist()])
        return rows[:, :-1], rows[:, 1:]

    def loss_of(x, y):
        return F.cross_entropy(model(x).reshape(-1, km.VOCAB), y.reshape(-1))

    start = time.time()
    for step in range(args.steps):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step)
        x, y = batch_of(train_ids, args.batch, generator)
        loss = loss_of(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if args.snapshot_every and (step + 1) % args.snapshot_every == 0:
            km.save_safetensors(os.path.join(args.out, f"kjv-step{step + 1}.safetensors"),
                                model.tmc_tensors(), dtype="F32")
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step:5d}  loss {loss.item():.3f}  lr {lr_at(step):.2e}  "
                  f"{time.time() - start:.0f} s", flush=True)

    model.eval()
    val_gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        val = sum(loss_of(*batch_of(val_ids, 16, val_gen)).item() for _ in range(4)) / 4
    print(f"validation loss {val:.3f} (perplexity {math.exp(val):.1f})")

    weights = os.path.join(args.out, "kjv.safetensors")
    km.save_safetensors(weights, model.tmc_tensors(), dtype="F32")
    print(f"wrote {weights} and {os.path.join(args.out, 'tokenizer')}/")
    for prompt in ("And God said", "The LORD is my shepherd"):
        new, _ = km.greedy(model, tokenizer.encode(prompt), 40)
        print(f"{prompt!r} -> {tokenizer.decode(new)!r}")


if __name__ == "__main__":
    main()
