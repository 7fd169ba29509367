#!/usr/bin/python3
# run_parity.py - One spec, compiled by tmc, against its PyTorch model.
#
#   run_parity.py --tmc build/bin/tmc --spec NAME --work DIR [--target T]
#
# --target (default $TMC_PARITY_TARGET, else host) is tmc's --target: on a
# machine with an NVIDIA GPU, `TMC_PARITY_TARGET=cuda ctest -L parity` runs
# the same suite against CUDA executables.
# NAME is one of `specs.py --list`. Compiles the spec, makes weights with
# `tmc init-weights`, runs the executable on a few inputs (full length, short
# with padding, one token; segments and sources where the model takes them)
# and compares each `--output` with torch_model.Model: the max relative error
# max|exe - torch| / max|torch| must be <= 1e-3. A model that generates (a
# decoder with an LM head) also decodes 32 greedy tokens; at every step the
# executable's token must be torch's argmax unless the two are near-tied
# there (within 1e-3 of the row's largest |logit|), which is reported.
# Prints one `parity:` JSON line with the numbers; exits 1 on any failure.

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
from torch_model import Model  # noqa: E402

TOLERANCE = 1e-3
TIE = 1e-3
NEW_TOKENS = 32
# The explicit torch code against torch.nn's layers, both in float64.
SELF_CONSISTENCY = 1e-9


def run(cmd, what):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{what} failed ({result.returncode}): {' '.join(cmd)}\n"
                           f"{result.stdout}{result.stderr}")
    return result.stdout


def relative_error(actual, expected):
    diff = (actual - expected).abs().max().item()
    return diff / max(expected.abs().max().item(), 1e-6)


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
    generates = dec is not None and config["output"]["kind"] == "lm_head"
    prompt = min(16, n - NEW_TOKENS) if generates else 16

    def tokens(count):
        return [rng.randrange(vocab) for _ in range(count)]

    def segs(count):
        return [rng.randrange(segments) for _ in range(count)] if segments else None

    runs = []
    if enc and dec:
        runs.append(dict(tokens=tokens(prompt), source=tokens(n), segments=segs(n),
                         max_new=NEW_TOKENS if generates else 0))
        runs.append(dict(tokens=tokens(n), source=tokens(n - 7), segments=segs(n - 7),
                         source_length=(n - 7) // 2))
        runs.append(dict(tokens=tokens(1), source=tokens(3), segments=segs(3), source_length=2))
    elif enc:
        runs.append(dict(tokens=tokens(n), segments=segs(n)))
        count = (2 * n) // 3
        runs.append(dict(tokens=tokens(count), segments=segs(count), length=count // 2 + 1))
        runs.append(dict(tokens=tokens(1), segments=segs(1)))
    else:
        runs.append(dict(tokens=tokens(prompt), max_new=NEW_TOKENS if generates else 0))
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


def describe(inputs):
    parts = [f"{len(inputs['tokens'])} tokens"]
    if inputs.get("source"):
        parts.append(f"{len(inputs['source'])} source tokens")
    if inputs.get("length") or inputs.get("source_length"):
        parts.append(f"length {inputs.get('length') or inputs.get('source_length')}")
    if inputs.get("segments"):
        parts.append("segments")
    return ", ".join(parts)


def check_generation(model, config, inputs, generated, prefill_logits, failures):
    """Teacher-forces torch with the executable's tokens; returns (equal, ties)."""
    if len(generated) != inputs["max_new"]:
        failures.append(f"generated {len(generated)} tokens, asked for {inputs['max_new']}")
        return 0, []
    steps = model.generate_logits(inputs["tokens"], generated, source=inputs.get("source"),
                                  source_length=inputs.get("source_length"),
                                  segments=inputs.get("segments"))
    # The cached torch decoder against its own prompt run (step 0) and, where
    # the mask only looks back, against recomputing the whole sequence.
    if relative_error(steps[0], prefill_logits[-1]) > SELF_CONSISTENCY:
        failures.append("torch: cached step 0 differs from the prompt run (harness bug)")
    if looks_back_only(config["decoder"]):
        full, _ = model.forward(inputs["tokens"] + generated[:-1], source=inputs.get("source"),
                                source_length=inputs.get("source_length"),
                                segments=inputs.get("segments"), use_nn=False)
        p = len(inputs["tokens"])
        err = relative_error(torch.stack(steps), full[p - 1:])
        if err > SELF_CONSISTENCY:
            failures.append(f"torch: cached decoding differs from recomputation by {err:.3g} "
                            "(harness bug)")
    equal, ties = 0, []
    for s, (logits, token) in enumerate(zip(steps, generated)):
        best = int(torch.argmax(logits))
        if token == best:
            equal += 1
            continue
        margin = (logits[best] - logits[token]).item()
        scale = logits.abs().max().item()
        if margin <= TIE * scale:
            ties.append(s)
            equal += 1  # a near-tie: either token is a faithful argmax
            continue
        failures.append(f"generation step {s}: executable chose {token}, torch's argmax is "
                        f"{best} by a margin of {margin:.4g} (logit scale {scale:.4g})")
        break
    return equal, ties


def main():
    parser = argparse.ArgumentParser(description="tmc against PyTorch for one spec")
    parser.add_argument("--tmc", required=True)
    parser.add_argument("--spec", required=True, help="a name from specs.py --list")
    parser.add_argument("--work", required=True, help="scratch directory")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--target", default=os.environ.get("TMC_PARITY_TARGET") or "host",
                        help="tmc compile --target (default: $TMC_PARITY_TARGET or host)")
    args = parser.parse_args()
    torch.set_num_threads(1)

    os.makedirs(args.work, exist_ok=True)
    path = specs.write(args.spec, args.work)
    config = json.loads(run([args.tmc, "check", "--json", path], "tmc check"))["config"]
    exe = os.path.join(args.work, "model")
    weights = os.path.join(args.work, "weights.safetensors")
    start = time.monotonic()
    run([args.tmc, "compile", path, "--target", args.target, "-o", exe], "tmc compile")
    compile_s = time.monotonic() - start
    run([args.tmc, "init-weights", path, "-o", weights, "--seed", str(args.seed)],
        "tmc init-weights")
    tensors, _ = safetensors_io.load(weights)
    model = Model(config, tensors)

    rng = random.Random(f"{args.spec}/{args.seed}")
    failures, errors, nn_used = [], [], False
    generation = None
    for index, inputs in enumerate(plan(config, rng)):
        out, generated = execute(exe, weights, inputs, os.path.join(args.work, f"out{index}.npy"))
        ref, used_nn = model.forward(inputs["tokens"], segments=inputs.get("segments"),
                                     length=inputs.get("length"), source=inputs.get("source"),
                                     source_length=inputs.get("source_length"))
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
        err = relative_error(out, ref)
        errors.append(err)
        verdict = "ok" if err <= TOLERANCE else "FAIL"
        print(f"{args.spec}: {describe(inputs)}: max relative error {err:.3g} "
              f"({'torch.nn layers' if used_nn else 'explicit torch'}) {verdict}")
        if err > TOLERANCE:
            failures.append(f"{describe(inputs)}: max relative error {err:.3g} > {TOLERANCE}")
        if inputs.get("max_new"):
            equal, ties = check_generation(model, config, inputs, generated, ref, failures)
            generation = {"steps": len(generated), "equal": equal, "near_ties": ties}
            print(f"{args.spec}: greedy generation: {equal}/{len(generated)} steps equal"
                  + (f", near-ties at steps {ties}" if ties else ""))

    summary = {"spec": args.spec, "target": args.target, "max_relative_error": max(errors) if errors else None,
               "generation": generation, "torch_nn_layers": nn_used,
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
