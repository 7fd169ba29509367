#!/usr/bin/python3
# numerics.py - Per-kernel consistency of compiled models with the reference.
#
#   numerics.py --list
#   numerics.py --case NAME --tmc build/bin/tmc --work DIR
#
# In the spirit of ggml's test-backend-ops: a matrix of small generated specs
# covers every op the compiler lowers (embeddings with each position kind,
# linear GEMMs with every epilogue, gated FFNs, both norms pre and post,
# attention with every mask kind and their sums, GQA, rope, alibi,
# cross-attention, linformer, pooling and heads) at awkward shapes (widths and
# head dims that are not multiples of the 8/16-lane vectors, a single token,
# max_seq tokens spanning several key blocks of the fused attention) on both
# x86 targets. Each case runs `tmc verify` (compiled kernels, traced, against
# the float64 reference evaluator, value by value) and checks every value's
#
#   normalized max error = max |compiled - reference| / max |reference|
#
# (over the value's whole [tokens, width] output; the `error` column of tmc
# verify) against the bound of its op below. Exits 1 when any value exceeds
# its bound or verify itself fails (its own tolerance is 1e-4 of the same
# metric); prints one line per run with the worst value per op.
#
# It also checks that the comparison covers the whole model: the values the
# reference taps are derived here from the case's spec text alone (embedding,
# per layer q/k/v/attn/o, residual sums, norms, ffn values, final norm, the
# output head), and every one must appear in verify's table, compared, or
# listed as fused into a kernel when it is of a kind fusion folds away. A run
# that compares fewer values fails, whatever verify's exit status.

import argparse
import os
import re
import subprocess
import sys
from collections import Counter

# Bounds of the normalized max error per op, about 20x the worst seen over the
# whole matrix (2-6e-7): float32 kernels against float64, errors compounding
# over at most 2 layers of tiny models. A real bug (a wrong mask key, a
# missing rescale in the online softmax, a dropped bias) moves errors to
# 1e-3 .. 1.
BOUNDS = {
    "embed": 2e-6,
    "q": 1e-5, "k": 1e-5, "v": 1e-5, "o": 1e-5,
    "attn": 1e-5,
    "up": 1e-5, "gate": 1e-5, "act": 1e-5, "down": 1e-5,
    "norm": 1e-5,
    "residual": 1e-5,
    "output": 1e-5, "classifier": 1e-5,
}


def op_of(value):
    """The op class of a verify value name, e.g. decoder.layers.0.self_attn.q -> q."""
    last = value.split(".")[-1]
    if value in ("embed", "output") or value.startswith("embed"):
        return "embed" if value.startswith("embed") else "output"
    if last.startswith("norm") or last == "final_norm" or "norm" in last:
        return "norm"
    if last.startswith("residual"):
        return "residual"
    return last


# What fusion may fold into a kernel that writes another value (verify lists
# them as fused, -O0 compares them): a residual sum into the norm after it,
# a projection (o, down) into the residual add of its epilogue. Any other
# value must be compared.
FUSIBLE = {"residual", "o", "down"}

# Gated ffn kinds tap up, gate and act; the others up (activated) only.
GATED = {"swiglu", "geglu"}


def block(text, keyword):
    """The body of the model's `keyword { ... }` block, or None."""
    m = re.search(r"^\s*" + keyword + r"\s*\{", text, re.M)
    if not m:
        return None
    depth, i = 1, m.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[m.end():i - 1]


def expected_values(text):
    """The names of the values the reference taps for the spec `text`, one
    per tap (an encoder-decoder's "embed" twice: source and target), as
    reference/Reference.cpp names them; from the spec alone, not from verify."""
    encoder, decoder = block(text, "encoder"), block(text, "decoder")
    values = ["embed"] * ((encoder is not None) + (decoder is not None))
    for name, body, cross in (("encoder", encoder, False),
                              ("decoder", decoder, encoder is not None)):
        if body is None:
            continue
        overrides = re.findall(r"layers\s+\d+\.\.\d+\s*\{([^}]*)\}", body)
        if any(re.search(r"\b(ffn|norm)\s*=", o) for o in overrides):
            raise ValueError(f"{name}: per-layer ffn or norm overrides are not modelled here")
        layers = int(re.search(r"\blayers\s*=\s*(\d+)", body).group(1))
        ffn = re.search(r"\bffn\s*=\s*(\w+)", body)
        gated = ffn is not None and ffn.group(1) in GATED
        for i in range(layers):
            prefix = f"{name}.layers.{i}"
            sublayers = ["self_attn"] + (["cross_attn"] if cross else [])
            for n, attention in enumerate(sublayers, 1):
                values += [f"{prefix}.{attention}.{x}" for x in ("q", "k", "v", "attn", "o")]
                values += [f"{prefix}.norm{n}", f"{prefix}.residual{n}"]
            n = len(sublayers) + 1
            values += [f"{prefix}.ffn.{x}"
                       for x in (("up", "gate", "act", "down") if gated else ("up", "down"))]
            values += [f"{prefix}.norm{n}", f"{prefix}.residual{n}"]
        if re.search(r"\bfinal_norm\s*=", body):
            values.append(f"{name}.final_norm")
    head = re.search(r"^\s*output\s*=\s*(\w+)", text, re.M)
    if head:  # else the output is the last layer's hidden state, counted above
        values.append({"lm_head": "output", "classifier": "classifier"}[head.group(1)])
    return values


def coverage_problems(expected, compared, fused, header):
    """Why verify's table does not cover every expected value: a value
    missing or extra, a value fused that fusion cannot fold away, or a
    header count that disagrees."""
    problems = []
    seen = Counter(compared) + Counter(fused)
    want = Counter(expected)
    missing, extra = want - seen, seen - want
    if missing:
        problems.append(f"compared {len(compared)} + fused {len(fused)} of {len(expected)} "
                        f"expected values; not in verify's table: "
                        f"{', '.join(sorted(missing.elements()))}")
    if extra:
        problems.append(f"values the spec does not have: {', '.join(sorted(extra.elements()))}")
    not_fusible = [v for v in fused if op_of(v) not in FUSIBLE]
    if not_fusible:
        problems.append(f"listed as fused, but fusion keeps these: {', '.join(not_fusible)}")
    if header is None:
        problems.append("no 'N of M reference values compared' line from tmc verify")
    elif header != (len(compared), len(expected)):
        problems.append(f"tmc verify says {header[0]} of {header[1]} values compared; "
                        f"its table has {len(compared)} compared, the spec {len(expected)}")
    return problems


def spec(name, body):
    return f"model {name.replace('-', '_')} {{\n{body}\n}}\n"


# name -> (spec text, [(target, tokens)]); tokens: "max" = max_seq.
CASES = {
    # d_model 20, head_dim 5, d_ff 36: no width a multiple of a vector;
    # 150 tokens = 3 key blocks (the last one partial) under a causal mask.
    "dec-causal-awkward": (spec("dec_causal_awkward", """
  vocab = 41
  d_model = 20
  max_seq = 150
  position = learned
  output = lm_head(tied = true)
  decoder {
    layers = 2
    heads = 4
    d_ff = 36
    ffn = gelu_tanh
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
    mask = causal
  }"""), [("x86-64-avx512", "max"), ("x86-64-avx2", 1), ("x86-64-avx2", 77)]),
    # GQA (6 query heads on 2 kv heads, head_dim 8), rope, rmsnorm, swiglu,
    # no biases, a sliding window that skips whole key blocks.
    "dec-window-rope-gqa": (spec("dec_window_rope_gqa", """
  vocab = 50
  d_model = 48
  max_seq = 160
  position = rope(theta = 10000)
  output = lm_head(tied = false)
  decoder {
    layers = 2
    heads = 6
    kv_heads = 2
    d_ff = 52
    ffn = swiglu
    bias = false
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
    mask = causal + sliding_window(size = 24)
  }"""), [("x86-64-avx512", "max"), ("x86-64-avx2", "max"), ("x86-64-avx512", 1)]),
    # ALiBi with a dilated window; geglu.
    "dec-dilated-alibi": (spec("dec_dilated_alibi", """
  vocab = 30
  d_model = 24
  max_seq = 140
  position = alibi
  output = lm_head(tied = true)
  decoder {
    layers = 2
    heads = 3
    d_ff = 40
    ffn = geglu
    norm = pre(layernorm(eps = 1e-5))
    final_norm = layernorm(eps = 1e-5)
    mask = causal + dilated_window(size = 40, dilation = 3)
  }"""), [("x86-64-avx512", "max"), ("x86-64-avx2", 65)]),
    # Causal with globals and random keys: the block walk must visit the
    # blocks holding a global or a drawn key, and every block of a global query.
    "dec-global-random": (spec("dec_global_random", """
  vocab = 30
  d_model = 32
  max_seq = 200
  position = learned
  output = lm_head(tied = true)
  decoder {
    layers = 2
    heads = 4
    ffn = relu
    mask = causal + sliding_window(size = 8) + global(tokens = [3, 130]) + random(per_row = 2, seed = 11)
  }"""), [("x86-64-avx512", "max"), ("x86-64-avx2", 140)]),
    # Encoder windows (|i - j| <= W/2) with globals, padding, mean pooling.
    "enc-window-global": (spec("enc_window_global", """
  vocab = 30
  d_model = 36
  max_seq = 150
  position = sinusoidal
  output = classifier(classes = 3, pool = mean)
  encoder {
    layers = 2
    heads = 4
    d_ff = 44
    ffn = gelu
    mask = padding + sliding_window(size = 16) + global(tokens = [0, 100])
  }"""), [("x86-64-avx512", "max"), ("x86-64-avx2", 131)]),
    # BigBird-style: random keys plus a window; a dilated window in layer 1.
    "enc-random-dilated": (spec("enc_random_dilated", """
  vocab = 30
  d_model = 32
  max_seq = 200
  position = learned
  output = classifier(classes = 2, pool = first)
  encoder {
    layers = 2
    heads = 2
    ffn = silu
    mask = sliding_window(size = 8) + random(per_row = 3, seed = 9)
    layers 1..1 { mask = dilated_window(size = 16, dilation = 2) + global(tokens = [5]) + random(per_row = 2, seed = 3) }
  }"""), [("x86-64-avx512", "max"), ("x86-64-avx2", "max")]),
    # Long contexts (4096 tokens, 64 key blocks) under each windowed mask
    # kind at the sizes users run them: a causal 256-token window (Mistral),
    # then Longformer's window + globals, BigBird's window + globals + random
    # keys and a dilated window, one layer each. Errors must not grow with the
    # number of blocks the online softmax absorbs.
    "dec-window-4k": (spec("dec_window_4k", """
  vocab = 31
  d_model = 32
  max_seq = 4096
  position = rope
  output = lm_head(tied = true)
  decoder {
    layers = 2
    heads = 2
    d_ff = 40
    ffn = swiglu
    norm = pre(rmsnorm(eps = 1e-6))
    final_norm = rmsnorm(eps = 1e-6)
    mask = causal + sliding_window(size = 256)
  }"""), [("x86-64-avx512", "max"), ("x86-64-avx2", 3001)]),
    "enc-windows-4k": (spec("enc_windows_4k", """
  vocab = 31
  d_model = 32
  max_seq = 4096
  position = learned
  output = classifier(classes = 2, pool = first)
  encoder {
    layers = 3
    heads = 2
    d_ff = 40
    ffn = gelu
    mask = padding + sliding_window(size = 256) + global(tokens = [0, 1, 2])
    layers 1..1 { mask = padding + sliding_window(size = 192) + global(tokens = [0]) + random(per_row = 3, seed = 5) }
    layers 2..2 { mask = padding + dilated_window(size = 128, dilation = 2) + global(tokens = [0, 2050]) }
  }"""), [("x86-64-avx512", "max")]),
    # Post-norm BERT-like: segments, embedding norm, padding mask, no mask.
    "enc-segments-postnorm": (spec("enc_segments_postnorm", """
  vocab = 30
  d_model = 28
  max_seq = 90
  position = learned
  segments = 2
  embed_norm = layernorm(eps = 1e-12)
  output = classifier(classes = 2, pool = first)
  encoder {
    layers = 2
    heads = 4
    d_ff = 60
    ffn = gelu
    norm = post(layernorm(eps = 1e-12))
    mask = padding
  }"""), [("x86-64-avx512", "max"), ("x86-64-avx2", 1)]),
    # Encoder-decoder: cross-attention over the source, GQA in the decoder.
    "encdec-cross": (spec("encdec_cross", """
  vocab = 40
  d_model = 32
  max_seq = 100
  position = learned
  share_embeddings = false
  output = lm_head(tied = true)
  encoder { layers = 2; heads = 4; d_ff = 48; ffn = relu; mask = padding }
  decoder { layers = 2; heads = 4; kv_heads = 2; d_ff = 48; ffn = gelu; mask = causal }"""),
        [("x86-64-avx512", "max"), ("x86-64-avx2", 3)]),
    # Linformer (keys and values projected to k rows) with GQA, next to a full layer.
    "enc-linformer": (spec("enc_linformer", """
  vocab = 30
  d_model = 32
  max_seq = 70
  position = learned
  output = classifier(classes = 3, pool = mean)
  encoder {
    layers = 2
    heads = 4
    kv_heads = 2
    ffn = gelu
    attention = linformer(k = 7)
    mask = padding
    layers 1..1 { attention = full }
  }"""), [("x86-64-avx512", "max"), ("x86-64-avx2", 70)]),
    # No mask at all, odd head count and widths, sinusoidal scaled embedding.
    "enc-none-odd": (spec("enc_none_odd", """
  vocab = 37
  d_model = 45
  max_seq = 75
  position = sinusoidal
  encoder {
    layers = 2
    heads = 3
    d_ff = 70
    norm = post(layernorm(eps = 1e-6))
  }"""), [("x86-64-avx512", "max"), ("x86-64-avx2", "max")]),
}


def tokens_for(text, vocab, count):
    return ",".join(str((7 * i + 3) % vocab) for i in range(count))


ROW = re.compile(r"^(\S+)\s+k\d+ (\S+)\s+([0-9.eE+-]+|inf|nan)\s+([0-9.eE+-]+|inf|nan)")
FUSED = re.compile(r"^(\S+)\s+k\d+ (\S+)\s+fused: not written out \(the kernel writes \S+\)$")
HEADER = re.compile(r"^tmc verify: .*; (\d+) of (\d+) reference values compared")


def cpu_flags():
    """This CPU's feature flags (/proc/cpuinfo), empty where it cannot be read."""
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^flags\s*:(.*)$", f.read(), re.M)
            return set(m.group(1).split()) if m else set()
    except OSError:
        return set()


def runnable_runs(runs, flags):
    """`runs` as this CPU can run them: an AVX-512 run on a CPU without
    AVX-512 (an AMD Zen 3, say) would only stop at its first instruction
    (SIGILL), so it runs on AVX2 instead, once per token count; each such
    substitution is returned to be said."""
    if "avx512f" in flags:
        return runs, []
    kept, notes = [], []
    for target, count in runs:
        if target.startswith("x86-64-avx512"):
            notes.append(f"--target {target} tokens={count}: this CPU has no AVX-512; "
                         f"run on x86-64-avx2")
            target = "x86-64-avx2"
        if (target, count) not in kept:
            kept.append((target, count))
    return kept, notes


def run_case(name, tmc, work):
    text, runs = CASES[name]
    runs, notes = runnable_runs(runs, cpu_flags())
    for note in notes:
        print(f"note {name} {note}")
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, name + ".tm")
    with open(path, "w") as f:
        f.write(text)
    weights = os.path.join(work, name + ".safetensors")
    subprocess.run([tmc, "init-weights", path, "-o", weights, "--seed", "3"], check=True,
                   capture_output=True)
    vocab = int(re.search(r"vocab = (\d+)", text).group(1))
    max_seq = int(re.search(r"max_seq = (\d+)", text).group(1))
    expected = expected_values(text)
    failures = 0
    for target, count in runs:
        count = max_seq if count == "max" else count
        cmd = [tmc, "verify", path, "--weights", weights, "--target", target,
               "--tokens", tokens_for(text, vocab, count)]
        result = subprocess.run(cmd, capture_output=True, text=True)
        worst = {}
        bad = []
        compared, fused, header = [], [], None
        for line in result.stdout.splitlines():
            if m := HEADER.match(line):
                header = (int(m.group(1)), int(m.group(2)))
            if m := FUSED.match(line):
                fused.append(m.group(1))
            m = ROW.match(line)
            if not m:
                continue
            value, kernel, error = m.group(1), m.group(2), float(m.group(4))
            compared.append(value)
            op = op_of(value)
            bound = BOUNDS.get(op)
            if bound is None:
                bad.append(f"{value}: no bound for op '{op}'")
                continue
            if op not in worst or error > worst[op][0]:
                worst[op] = (error, value)
            if not error <= bound:
                bad.append(f"{value} ({kernel}): normalized max error {error:.2e} > {bound:.0e}")
        if result.returncode != 0:
            bad.append(f"tmc verify exited {result.returncode}")
        bad += coverage_problems(expected, compared, fused, header)
        summary = " ".join(f"{op}={e:.1e}" for op, (e, _) in sorted(worst.items()))
        status = "FAIL" if bad else "ok"
        print(f"{status} {name} --target {target} tokens={count}: {len(compared)} of "
              f"{len(expected)} values compared, {len(fused)} fused; {summary}")
        for b in bad:
            print(f"    {b}")
        if bad:
            failures += 1
            print(result.stdout[-4000:] + result.stderr[-2000:])
    return failures == 0


def main():
    parser = argparse.ArgumentParser(description="per-kernel numerics against the reference")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--case", choices=sorted(CASES))
    parser.add_argument("--tmc")
    parser.add_argument("--work")
    args = parser.parse_args()
    if args.list:
        print("\n".join(CASES))
        return 0
    if not (args.case and args.tmc and args.work):
        parser.error("--case, --tmc and --work are required (or --list)")
    return 0 if run_case(args.case, args.tmc, args.work) else 1


if __name__ == "__main__":
    sys.exit(main())
