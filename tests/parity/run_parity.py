#!/usr/bin/python3
# run_parity.py - One spec, compiled by tmc, against its PyTorch model.
#
#   run_parity.py --tmc build/bin/tmc --spec NAME --work DIR [--target T]
#
# --target (default $TMC_PARITY_TARGET, else native) is tmc's --target: on a
# machine with an NVIDIA GPU, `TMC_PARITY_TARGET=cuda ctest -L parity` runs
# the same suite against CUDA executables. `native` is the variant of `host`
# this CPU runs, compiled alone (a third of host's compile time): the same
# kernels the multi-ISA executable would pick here; the e2e suite checks
# every variant of `host` and its dispatch (tests/e2e, TMC_ISA).
# NAME is one of `specs.py --list`. Compiles the spec, makes weights with
# `tmc init-weights`, runs the executable on a few inputs (full length, short
# with padding, one token; segments and sources where the model takes them)
# and compares each `--output` with torch_model.Model: the max relative error
# max|exe - torch| / max|torch| must be <= 1e-5. A model that generates (a
# decoder with an LM head) also decodes 32 greedy tokens, and its `--output`
# then holds the logits of every position, prompt and generated: the prompt's
# rows must match the prefill, and the rows of every decoding step (from the
# prompt's last row on, one per generated token) must match torch
# teacher-forced with the executable's tokens, at the same tolerance. Each
# token must also be the argmax of its own row and torch's argmax unless the
# two are near-tied there, which is reported. The weights of a generating
# spec are chosen so that its greedy output is varied (WEIGHT_CANDIDATES).
# With bf16, int8 or q4 linears, or f16 or bf16 key/value caches, a difference
# may also be explained by a few activations or cached keys and values that
# lie within f32 noise of a rounding tie and round the other way in the
# executable (NEAR_TIE, explain()); each is reported.
# Prints one `parity:` JSON line with the numbers; exits 1 on any failure,
# 77 (skipped) for a bf16, int8 or q4 spec on a GPU target, which refuses them.

import argparse
import json
import os
import random
import subprocess
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402
import specs  # noqa: E402
from torch_model import Model, Roundings  # noqa: E402

# The max relative error allowed, for the prompt's rows and the decoding
# steps alike. The f32 kernels reach 1e-7..7e-7 against float64 torch with
# mild weights, and up to 2.3e-6 with the gain-4 weights some specs get below
# (f16 and bf16 specs too: their narrow weights are read exactly by both
# sides), so 1e-5 leaves a margin of 4 or more.
TOLERANCE = 1e-5
# Looser tolerances, per spec, with why. The weights that make a spec's greedy
# output varied (below) can also make it ill-conditioned: every 2x of gain
# makes the attention scores 4x larger, and a softmax of large scores turns the
# f32 rounding of its inputs into a larger error of its outputs.
SPEC_TOLERANCE = {
    # Only gain 6 or more gives this spec varied greedy output (rope, geglu,
    # grouped queries: 1 distinct token of 32 at gain <= 2, 6..15 at gain 4);
    # at gain 8 the prompt rows measure 2.8e-5 and the decoding steps 3.0e-5
    # (1.5e-4 at the worst of six seeds tried), at gain 1 4e-7.
    "encdec-rope-unshared": 1e-4,
}
# A near-tie, relative to the same max|torch| as the tolerance: where every
# logit of a step is within the tolerance of torch's, the executable's token
# can trail torch's best by at most twice that; a larger margin is a wrong token.
TIE = 2
NEW_TOKENS = 32
# The weights of a generating spec: `tmc init-weights` (seed offset, token
# embedding scale, gain) candidates, tried in this order; the first whose greedy
# output has at least half of its tokens distinct is used for every run of the
# spec (the choice is printed). Default weights first; a tied head mostly
# repeats the last token with them (the residual stream keeps the input's
# embedding), which a smaller token table (the layers' outputs dominate) or a
# larger gain undoes. Which works differs per spec; mild settings over a few
# seeds come before larger gains, which cost accuracy (SPEC_TOLERANCE). Specs
# that only run a prefill keep the default weights.
WEIGHT_CANDIDATES = [(k, scale, gain)
                     for scale, gain in ((1.0, 1.0), (0.1, 2.0), (0.1, 1.5), (0.01, 1.0),
                                         (1.0, 4.0), (1.0, 8.0))
                     for k in range(3)]
# Specs that no candidate makes half distinct: their fixed weights (seed
# offset, scale, gain), the fewest distinct tokens still required (fewer fails)
# and why. Both are post-norm with a tied head and a relu ffn: the last norm's
# output stays close to the input token's embedding, so greedy decoding
# repeats a token a few times before it moves on. A wider search (30 seeds x
# 5 or 6 settings, gains 0.25..64, scales 0.001..3) found at most 13 distinct
# of 32 for transformer-base-scaled, and for dec-noncausal 17 once in 150
# tries, at gains of 8 or more, which are ill-conditioned (2e-5 at gain 16).
REPETITIVE = {
    "transformer-base-scaled": ((1, 0.01, 1.0), 8,
                                "post-norm, tied head, relu: greedy decoding repeats tokens "
                                "(13 distinct of 32 with these weights, at most 13 found)"),
    "dec-noncausal": ((2, 1.0, 4.0), 6,
                      "post-norm, tied head, relu, no positions: greedy decoding repeats tokens "
                      "(9 distinct of 32 with these weights; 13 at gain 8, with 6e-6 error)"),
}
# The explicit torch code against torch.nn's layers, both in float64.
SELF_CONSISTENCY = 1e-9
# The exit status of a spec the target cannot compile (ctest's SKIP_RETURN_CODE).
SKIPPED = 77
# Reduced precision (`precision = bf16 | int8 | q4`): torch rounds the
# linears' activations exactly as the contract says, and so does the
# executable, but each rounds its own activations, which differ by f32
# rounding error (about 1e-7 of the row's largest magnitude). An activation
# within that of a rounding tie can round one way in torch and the other in
# the executable, and one such step (1/127 of the row's largest magnitude in
# int8 and q4, whose activations are quantized as int8's, one bf16 spacing)
# moves the outputs by far more than the tolerance: one product of the sum
# moves by the step times the weight (in q4 the weight's dequantized value,
# (q - 8) times its block's f16 scale); measured, 4e-5 to 3e-2 of the largest
# output for one int8 step, 1e-3 to 8e-3 for one q4 step, 6e-5 to 3e-3 for one
# or two bf16 steps. That is as large as a wrong model's error (int8 weights
# quantized but activations not, or per-tensor scales: 3e-3 to 9e-2; bf16
# weights with unrounded activations: 1.7e-3 to 6e-3; q4 scales not rounded
# to f16: 2.8e-3 to 1.1e-2), so no looser
# tolerance can tell the two apart (README.md, "Reduced precision"). Instead, where a comparison fails, the
# difference must be explained (explain()): torch notes each activation
# within NEAR_TIE of its row's largest magnitude of a tie (16 to 32 f32 ulps
# of it; the roundings that did flip lay within 7e-7), and rounds at most
# MAX_FLIPS of them the other way, chosen greedily among the TIE_CANDIDATES
# likeliest to matter; the outputs with those taken must then be within the
# same tolerance, and each flip is reported. A wrong model (either of the
# above) still fails: its difference is everywhere, not at a few ties.
NEAR_TIE = 2e-6
TIE_CANDIDATES = 32
MAX_FLIPS = 4


def run(cmd, what):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{what} failed ({result.returncode}): {' '.join(cmd)}\n"
                           f"{result.stdout}{result.stderr}")
    return result.stdout


def relative_error(actual, expected):
    diff = (actual - expected).abs().max().item()
    return diff / max(expected.abs().max().item(), 1e-6)


def explain(evaluate, actual, tolerance, base=()):
    """Torch's values for `actual`, where reduced-precision roundings near a
    tie may differ (NEAR_TIE): evaluate(flips, track) gives torch's values
    with the near-tie keys `flips` rounded the other way, and the Roundings of
    that evaluation. Starting from `base`, while the error passes `tolerance`,
    adds the flip that lowers it most, up to MAX_FLIPS: each round evaluates
    the TIE_CANDIDATES near-ties of the current roundings likeliest to matter
    (half by the first-order effect of flipping each on the difference, from
    one backward pass; half by their step over their distance from the tie),
    each added to the flips so far, and keeps the best (of equal errors, the
    one with the smaller sum of differences) if it lowers the error by 5% or
    more. A flip moves later activations too, so each round takes
    the near-ties of the evaluation with the flips so far. Returns (torch's
    values, their relative error, the error without added flips, every flip,
    a description of each added one)."""
    flips = list(base)
    expected, roundings = evaluate(flips)
    plain = err = relative_error(actual, expected)
    if tuple(actual.shape) != tuple(expected.shape):
        return expected, plain, plain, flips, []
    described = []
    while err > tolerance and len(described) < MAX_FLIPS:
        seen = {key: info for key, info in roundings.seen.items() if key not in flips}
        if not seen:
            break
        tracked, tracking = evaluate(flips, track=True)
        ((actual - expected) * tracked).sum().backward()
        gain = dict.fromkeys(seen, 0.0)
        for key in seen:
            for site, r, c in tracking.where.get(key, ()):
                leaf, step = tracking.sites[site]
                if leaf.grad is not None:
                    gain[key] += (step[r, c] * leaf.grad[r, c]).item()
        by_gain = sorted(seen, key=lambda k: -gain[k])
        # (A distance of 0, an exact tie, counts as one f32 epsilon.)
        by_step = sorted(seen, key=lambda k: -seen[k][1] / max(seen[k][0], 2.0 ** -24))
        candidates = list(dict.fromkeys(by_gain[:TIE_CANDIDATES // 2]
                                        + by_step[:TIE_CANDIDATES // 2]))
        best = None
        for key in candidates:
            values, flipped = evaluate(flips + [key])
            # Ties of the max error (another row or step holds it) go to the
            # candidate closer everywhere: the one that fixes the row it
            # touches rather than only part of it.
            e = (relative_error(actual, values), (actual - values).abs().sum().item())
            if best is None or e < best[0]:
                best = (e, key, values, flipped)
        if best[0][0] > 0.95 * err:
            break
        (err, _), key, expected, roundings = best
        flips.append(key)
        described.append(f"{key[0]} column {key[2]}, {seen[key][0]:.2g} of its row's largest "
                         f"magnitude from a tie (step {seen[key][1]:.2g})")
    # A later flip can change the row an earlier one named (its key then
    # matches nothing) or make it unneeded: keep only flips that matter.
    for i in reversed(range(len(base), len(flips))):
        values, _ = evaluate(flips[:i] + flips[i + 1:])
        e = relative_error(actual, values)
        if e <= err:
            err, expected = e, values
            del flips[i], described[i - len(base)]
    return expected, err, plain, flips, described


def flip_note(plain, described):
    """What a comparison's line adds when explain() took roundings the other way."""
    if not described:
        return ""
    return (f"; {len(described)} near-tie rounding(s) taken the other way (without: "
            f"{plain:.3g}): " + "; ".join(described))


def looks_back_only(stack):
    """Whether no decoder position ever sees a later one, so that decoding
    with a cache is the same as recomputing the whole sequence."""
    for layer in stack["layer_specs"]:
        if layer["attention"]["kind"] != "full":
            return False
        kinds = {t["kind"] for t in layer["mask"]}
        windows = {"sliding_window", "dilated_window"}
        if "causal" not in kinds and not (kinds - {"padding"} and kinds - {"padding"} <= windows):
            return False
    return True


def plan(config, rng):
    """The inputs to run: dicts of tokens, segments, length, source,
    source_length and max_new."""
    enc, dec = config["encoder"], config["decoder"]
    n, vocab, segments = config["max_seq"], config["vocab"], config["segments"]
    # A generating decoder decodes NEW_TOKENS after its prompt where max_seq
    # leaves room for both, else half of max_seq (none at max_seq 1).
    new = NEW_TOKENS if n >= NEW_TOKENS + 2 else n // 2
    generates = dec is not None and config["output"]["kind"] == "lm_head" and new > 0
    prompt = min(16, n - new) if generates else min(16, n)

    def tokens(count):
        return [rng.randrange(vocab) for _ in range(count)]

    def segs(count):
        return [rng.randrange(segments) for _ in range(count)] if segments else None

    runs = []
    if enc and dec:
        runs.append(dict(tokens=tokens(prompt), source=tokens(n), segments=segs(n),
                         max_new=new if generates else 0))
        padded = min(n, max(2, n - 7))  # a source padded to about half its rows
        runs.append(dict(tokens=tokens(n), source=tokens(padded), segments=segs(padded),
                         source_length=max(1, padded // 2)))
        short = min(3, n)
        runs.append(dict(tokens=tokens(1), source=tokens(short), segments=segs(short),
                         source_length=max(1, short - 1)))
    elif enc:
        runs.append(dict(tokens=tokens(n), segments=segs(n)))
        count = max(1, (2 * n) // 3)
        runs.append(dict(tokens=tokens(count), segments=segs(count), length=count // 2 + 1))
        runs.append(dict(tokens=tokens(1), segments=segs(1)))
    else:
        runs.append(dict(tokens=tokens(prompt), max_new=new if generates else 0))
        runs.append(dict(tokens=tokens(n)))
        runs.append(dict(tokens=tokens(1)))
    return runs


def execute(exe, weights, inputs, out_path):
    # Two threads for the longest input, so the parallel schedules run too.
    threads = "2" if len(inputs["tokens"]) + len(inputs.get("source") or []) > 40 else "1"
    cmd = [exe, "--weights", weights, "--threads", threads, "--output", out_path,
           "--tokens", ",".join(map(str, inputs["tokens"]))]
    if inputs.get("source"):
        cmd += ["--source-tokens", ",".join(map(str, inputs["source"]))]
    if inputs.get("segments"):
        cmd += ["--segments", ",".join(map(str, inputs["segments"]))]
    if inputs.get("length"):
        cmd += ["--lengths", str(inputs["length"])]
    if inputs.get("source_length"):
        cmd += ["--lengths", str(inputs["source_length"])]
    if inputs.get("max_new"):
        cmd += ["--max-new", str(inputs["max_new"]), "--json"]
    stdout = run(cmd, "the compiled model")
    output = torch.from_numpy(np.load(out_path).astype(np.float64))[0]
    generated = json.loads(stdout.strip().splitlines()[-1])["generated"] if inputs.get("max_new") else []
    return output, generated


def check_batched(args, exe, weights, runs, references, tolerance, failures):
    """All the runs' inputs at once through --batch-input (one batched call:
    the linears over every row, attention per input; an encoder-decoder's
    sources likewise, in its encode phase): each input's rows
    against torch at the same tolerance as its own run, and how many values
    equal that run's exactly."""
    lines = []
    for inputs in runs:
        line = {"tokens": inputs["tokens"]}
        # An encoder-decoder's sources are encoded in one batched call too;
        # its segments and length label the source.
        if inputs.get("source"):
            line["source_tokens"] = inputs["source"]
        if inputs.get("segments"):
            line["segments"] = inputs["segments"]
        if inputs.get("length") or inputs.get("source_length"):
            line["length"] = inputs.get("length") or inputs.get("source_length")
        lines.append(json.dumps(line))
    batch_in = os.path.join(args.work, "batch.jsonl")
    batch_out = os.path.join(args.work, "batch.npy")
    with open(batch_in, "w") as f:
        f.write("\n".join(lines) + "\n")
    run([exe, "--weights", weights, "--threads", "2", "--batch-input", batch_in,
         "--max-batch", str(len(runs)), "--output", batch_out], "the compiled model's batch")
    batched = torch.from_numpy(np.load(batch_out).astype(np.float64))
    for index, (inputs, (single, ref)) in enumerate(zip(runs, references)):
        rows = batched[index, :single.shape[0]]
        err = relative_error(rows, ref)
        exact = float((rows == single).double().mean()) * 100
        verdict = "ok" if err <= tolerance else "FAIL"
        print(f"{args.spec}: batched with {len(runs) - 1} other inputs: {describe(inputs)}: max "
              f"relative error {err:.3g}, {exact:.1f}% of values identical to its own run "
              f"{verdict}")
        if err > tolerance:
            failures.append(f"batched: {describe(inputs)}: max relative error {err:.3g} > "
                            f"{tolerance}")


def describe(inputs):
    parts = [f"{len(inputs['tokens'])} tokens"]
    if inputs.get("source"):
        parts.append(f"{len(inputs['source'])} source tokens")
    if inputs.get("length") or inputs.get("source_length"):
        parts.append(f"length {inputs.get('length') or inputs.get('source_length')}")
    if inputs.get("segments"):
        parts.append("segments")
    return ", ".join(parts)


def check_generation(spec, model, config, inputs, out, generated, prefill_flips, failures):
    """The decoding steps: the executable's rows from the prompt's last one on
    (one per generated token, and one more after the last) against torch
    teacher-forced with the executable's tokens, value by value (with the
    prompt run's flips, and more where explain() finds them); then each token
    against the argmax of its row. Returns a dict of the numbers."""
    result = {"steps": len(generated), "equal": 0, "near_ties": [],
              "decoding_max_relative_error": None, "decoding_flips": []}
    if len(generated) != inputs["max_new"]:
        failures.append(f"generated {len(generated)} tokens, asked for {inputs['max_new']}")
        return result
    p = len(inputs["tokens"])
    rows = out[p - 1:]

    def evaluate(flips, track=False):
        model.roundings = Roundings(NEAR_TIE, flips, track)
        steps = torch.stack(model.generate_logits(inputs["tokens"], generated,
                                                  source=inputs.get("source"),
                                                  source_length=inputs.get("source_length"),
                                                  segments=inputs.get("segments")))
        return steps, model.roundings

    tolerance = SPEC_TOLERANCE.get(spec, TOLERANCE)
    steps, _, plain, flips, described = explain(evaluate, rows, tolerance, prefill_flips)
    result["decoding_flips"] = described
    model.roundings = Roundings(NEAR_TIE, flips)  # the same roundings from here on
    # The cached torch decoder against its own prompt run (step 0) and, where
    # the mask only looks back, against recomputing the whole sequence.
    prompt, _ = model.forward(inputs["tokens"], source=inputs.get("source"),
                              source_length=inputs.get("source_length"),
                              segments=inputs.get("segments"), use_nn=False)
    if relative_error(steps[0], prompt[-1]) > SELF_CONSISTENCY:
        failures.append("torch: cached step 0 differs from the prompt run (harness bug)")
    if looks_back_only(config["decoder"]):
        full, _ = model.forward(inputs["tokens"] + generated, source=inputs.get("source"),
                                source_length=inputs.get("source_length"),
                                segments=inputs.get("segments"), use_nn=False)
        err = relative_error(steps, full[p - 1:])
        if err > SELF_CONSISTENCY:
            failures.append(f"torch: cached decoding differs from recomputation by {err:.3g} "
                            "(harness bug)")
    if tuple(rows.shape) != tuple(steps.shape):
        failures.append(f"decoding logits: {tuple(rows.shape)} rows from the prompt's last "
                        f"on, torch {tuple(steps.shape)}")
        return result
    # The same metric as the prefill, over all the steps; the worst step is named.
    scale = max(steps.abs().max().item(), 1e-6)
    per_step = (rows - steps).abs().max(dim=1).values / scale
    err, worst = per_step.max().item(), int(per_step.argmax())
    result["decoding_max_relative_error"] = err
    verdict = "ok" if err <= tolerance else "FAIL"
    print(f"{spec}: decoding logits, {len(steps)} steps: max relative error "
          f"{err:.3g} (at step {worst}) {verdict}" + flip_note(plain, described))
    if err > tolerance:
        first = next(s for s, e in enumerate(per_step.tolist()) if e > tolerance)
        failures.append(f"decoding logits: max relative error {err:.3g} > {tolerance} at step "
                        f"{worst} (first over at step {first} of {len(steps)})")
    for s, token in enumerate(generated):
        # The executable's token is the argmax of its own row (an exact tie
        # either way), so the rows are the ones it decoded with.
        if rows[s, token] != rows[s].max():
            failures.append(f"generation step {s}: executable chose {token}, its own logits' "
                            f"argmax is {int(torch.argmax(rows[s]))}")
            break
        best = int(torch.argmax(steps[s]))
        if token == best:
            result["equal"] += 1
            continue
        margin = (steps[s, best] - steps[s, token]).item()
        if margin <= TIE * tolerance * scale:
            result["near_ties"].append(s)
            result["equal"] += 1  # a near-tie: either token is a faithful argmax
            continue
        failures.append(f"generation step {s}: executable chose {token}, torch's argmax is "
                        f"{best} by a margin of {margin:.4g} (logit scale {scale:.4g})")
        break
    return result


def make_weights(tmc, path, weights, setting):
    seed, scale, gain = setting
    run([tmc, "init-weights", path, "-o", weights, "--seed", str(seed),
         "--token-embedding-scale", repr(scale), "--gain", repr(gain)], "tmc init-weights")


def choose_weights(args, path, exe, weights, inputs):
    """Writes the weights of a generating spec: the first candidate whose
    greedy output on `inputs` has at least half of its tokens distinct, or the
    fixed weights of a REPETITIVE spec. Returns (init-weights seed, scale,
    gain), the distinct tokens and a note (None unless REPETITIVE); raises if
    the output is too repetitive."""
    scratch = os.path.join(args.work, "choose.npy")

    def distinct_tokens(setting):
        make_weights(args.tmc, path, weights, setting)
        _, generated = execute(exe, weights, inputs, scratch)
        return len(set(generated)) if len(generated) == inputs["max_new"] else 0

    if args.spec in REPETITIVE:
        (k, scale, gain), least, why = REPETITIVE[args.spec]
        setting = (args.seed + k, scale, gain)
        distinct = distinct_tokens(setting)
        if distinct < least:
            raise RuntimeError(f"greedy output too repetitive even for its exception: {distinct} "
                               f"distinct of {inputs['max_new']}, at least {least} expected "
                               f"({why})")
        return setting, distinct, f"fewer than half distinct is allowed here: {why}"
    best = 0
    for k, scale, gain in WEIGHT_CANDIDATES:
        setting = (args.seed + k, scale, gain)
        distinct = distinct_tokens(setting)
        if 2 * distinct >= inputs["max_new"]:
            return setting, distinct, None
        best = max(best, distinct)
    if args.spec_file:
        # A random spec is nobody's curated choice: repetitive greedy output
        # is not an error of tmc's, so the default weights (the mildest, the
        # best conditioned) are used.
        setting = (args.seed, 1.0, 1.0)
        distinct = distinct_tokens(setting)
        return setting, distinct, ("--spec-file: no candidate gives half distinct tokens "
                                   f"(at best {best}); the default weights are used")
    raise RuntimeError(f"no weight candidate gives varied greedy output (at least half of "
                       f"{inputs['max_new']} tokens distinct; at best {best})")


def main():
    parser = argparse.ArgumentParser(description="tmc against PyTorch for one spec")
    parser.add_argument("--tmc", required=True)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--spec", help="a name from specs.py --list")
    which.add_argument("--spec-file", help="a spec file not in specs.py (random_specs.py's): "
                       "run as --spec NAME runs, without expected_configs.py's check, which "
                       "holds specs.py's specs only")
    parser.add_argument("--work", required=True, help="scratch directory")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--target", default=os.environ.get("TMC_PARITY_TARGET") or "native",
                        help="tmc compile --target (default: $TMC_PARITY_TARGET or native)")
    args = parser.parse_args()
    torch.set_num_threads(1)

    os.makedirs(args.work, exist_ok=True)
    if args.spec_file:
        path = os.path.abspath(args.spec_file)
        args.spec = os.path.splitext(os.path.basename(path))[0]
    else:
        path = specs.write(args.spec, args.work)
    # The torch model is built from tmc's own reading of the spec; a wrong
    # default or override would give both sides the same wrong model, so the
    # config must first equal the one written by hand from the contract
    # (specs.py's specs only: a --spec-file has no hand-written config).
    from expected_configs import config_of, diff_config
    config = config_of(json.loads(run([args.tmc, "check", "--json", path], "tmc check")))
    wrong = None if args.spec_file else diff_config(args.spec, config)
    if wrong:
        raise RuntimeError("tmc check's config differs from tests/parity/expected_configs.py "
                           "(written from docs/spec-language.md):\n" + "\n".join(wrong))
    precisions = {config["precision"]} | {layer["precision"]
                                           for stack in (config["encoder"], config["decoder"])
                                           if stack for layer in stack["layer_specs"]}
    if args.target.startswith("cuda") and precisions != {"f32"}:
        # docs/spec-language.md: the GPU targets refuse bf16, int8 and q4 linears.
        print(f"{args.spec}: skipped: --target {args.target} compiles f32 linears only, and "
              f"this spec has {' and '.join(sorted(precisions - {'f32'}))} ones")
        return SKIPPED
    exe = os.path.join(args.work, "model")
    weights = os.path.join(args.work, "weights.safetensors")
    start = time.monotonic()
    run([args.tmc, "compile", path, "--target", args.target, "-o", exe], "tmc compile")
    compile_s = time.monotonic() - start
    rng = random.Random(f"{args.spec}/{args.seed}")
    runs = plan(config, rng)
    decoding = [inputs for inputs in runs if inputs.get("max_new")]
    weight_setting, distinct, note = (args.seed, 1.0, 1.0), None, None
    if decoding:
        # One set of weights for every run, the prefill ones included.
        weight_setting, distinct, note = choose_weights(args, path, exe, weights, decoding[0])
        print(f"{args.spec}: weights --seed {weight_setting[0]} --token-embedding-scale "
              f"{weight_setting[1]} --gain {weight_setting[2]}: {distinct} of "
              f"{decoding[0]['max_new']} greedy tokens distinct" + (f"; NOTE: {note}" if note else ""))
    else:
        make_weights(args.tmc, path, weights, weight_setting)
    tensors, _ = safetensors_io.load(weights)
    model = Model(config, tensors)

    failures, errors, nn_used = [], [], False
    generation, flipped = None, {}
    tolerance = SPEC_TOLERANCE.get(args.spec, TOLERANCE)
    if tolerance != TOLERANCE:
        print(f"{args.spec}: NOTE: tolerance {tolerance}, not {TOLERANCE} (SPEC_TOLERANCE says why)")
    references = []  # per run: (the executable's rows, torch's)
    for index, inputs in enumerate(runs):
        out, generated = execute(exe, weights, inputs, os.path.join(args.work, f"out{index}.npy"))
        # With --max-new the output also has a row per generated token; the
        # prompt's rows are the prefill, the rest check_generation's.
        full_out, out = out, out[:len(inputs["tokens"])]
        used_nn = False

        def evaluate(flips, track=False):
            nonlocal used_nn
            model.roundings = Roundings(NEAR_TIE, flips, track)
            ref, used_nn = model.forward(inputs["tokens"], segments=inputs.get("segments"),
                                         length=inputs.get("length"), source=inputs.get("source"),
                                         source_length=inputs.get("source_length"))
            return ref, model.roundings

        ref, err, plain, flips, described = explain(evaluate, out, tolerance)
        model.roundings = Roundings(NEAR_TIE, flips)  # the same roundings from here on
        if described:
            flipped[describe(inputs)] = described
        if used_nn:
            nn_used = True
            explicit, _ = model.forward(inputs["tokens"], segments=inputs.get("segments"),
                                        length=inputs.get("length"),
                                        source=inputs.get("source"),
                                        source_length=inputs.get("source_length"), use_nn=False)
            if relative_error(explicit, ref) > SELF_CONSISTENCY:
                failures.append(f"torch: explicit code and torch.nn layers disagree by "
                                f"{relative_error(explicit, ref):.3g} (harness bug)")
        if tuple(out.shape) != tuple(ref.shape):
            failures.append(f"{describe(inputs)}: output shape {tuple(out.shape)}, torch "
                            f"{tuple(ref.shape)}")
            continue
        errors.append(err)
        references.append((out, ref))
        verdict = "ok" if err <= tolerance else "FAIL"
        print(f"{args.spec}: {describe(inputs)}: max relative error {err:.3g} "
              f"({'torch.nn layers' if used_nn else 'explicit torch'}) {verdict}"
              + flip_note(plain, described))
        if err > tolerance:
            failures.append(f"{describe(inputs)}: max relative error {err:.3g} > {tolerance}")
        if inputs.get("max_new"):
            if full_out.shape[0] != len(inputs["tokens"]) + len(generated):
                failures.append(f"{describe(inputs)}: {full_out.shape[0]} output rows for "
                                f"{len(inputs['tokens'])} prompt and {len(generated)} "
                                "generated tokens")
                continue
            generation = check_generation(args.spec, model, config, inputs, full_out, generated,
                                          flips, failures)
            if generation["decoding_flips"]:
                flipped["decoding steps"] = generation["decoding_flips"]
            generation.update(distinct=distinct, weights=weight_setting, note=note)
            ties = generation["near_ties"]
            print(f"{args.spec}: greedy generation: {generation['equal']}/{len(generated)} steps "
                  "equal" + (f", near-ties at steps {ties}" if ties else ""))

    if len(references) == len(runs):
        check_batched(args, exe, weights, runs, references, tolerance, failures)

    summary = {"spec": args.spec, "target": args.target, "max_relative_error": max(errors) if errors else None,
               "tolerance": tolerance, "generation": generation, "torch_nn_layers": nn_used,
               "flipped_roundings": flipped,
               "compile_s": round(compile_s, 1), "ok": not failures}
    print("parity: " + json.dumps(summary))
    for failure in failures:
        print(f"{args.spec}: FAIL: {failure}")
    return 0 if not failures else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print(f"error: {e}")
        sys.exit(1)
