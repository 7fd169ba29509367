#!/usr/bin/env python3
# gpu_bundle.py - CUDA executables checked on a GPU machine that has no tmc.
#
#   gpu_bundle.py prepare --tmc build/bin/tmc --out DIR [--precision P] [--kv-cache P]
#                         [--quantize] [--on-host] [--bench] SPEC.tm ...
#   gpu_bundle.py check DIR [--tolerance 1e-4] [--timeout 300]
#   gpu_bundle.py on-host --tmc build/bin/tmc --out DIR [--precisions bf16,int8] SPEC.tm ...
#
# `prepare` (on the machine with the compiler) compiles each spec twice, for
# the host and for `--target cuda`, makes seeded weights, and runs the host
# executable: the prompt's output, and where the model generates, 8 greedy
# steps (every position's logits and the tokens). DIR then holds the CUDA
# executables, the weights and those host results, with bundle.json naming
# them. `check` (on the GPU machine: numpy and an NVIDIA driver, nothing else)
# runs each CUDA executable on the same inputs and compares: the max error
# normalized by the largest host value must be within --tolerance (the GPU
# sums the same products in another order and contracts them into FMAs, so f32
# agreement is near 1e-6, reduced precision near its rounding ties), and the
# generated tokens must be the same, with --output (every row's logits) and
# without (the prompt's last row alone). It prints one line per model and exits 1
# if any differs. With --quantize both executables load the `tmc quantize`
# file of the seeded weights. Models prepared with --bench (too large to carry
# weights for) are timed instead: `check` writes seeded weights from their
# manifest and prints each executable's --bench line. With --on-host,
# `prepare` compiles the GPU schedules for this CPU instead
# (TMC_GPU_SCHEDULE_ON_HOST=1), and ctest runs both verbs here (label cuda):
# the same comparison without a GPU.

import argparse
import json
import os
import shutil
import subprocess
import sys

PROMPT = "1,2,3,4,5"
SOURCE = "3,1,4,1,5,9,2"
STEPS = 8


# Seconds one command may run (`check --timeout`): a GPU machine is lent for
# minutes, and a hung executable must not spend them all.
TIMEOUT = 300


def run(cmd, **kwargs):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, **kwargs)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", f"timed out after {TIMEOUT} s")


def must(cmd, **kwargs):
    result = run(cmd, **kwargs)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed ({result.returncode}):\n"
                 f"{result.stdout}{result.stderr}")
    return result


def prepare(args):
    os.makedirs(args.out, exist_ok=True)
    host_dir = os.path.join(args.out, "host")
    os.makedirs(host_dir, exist_ok=True)
    models = []
    precision = ["--precision", args.precision] if args.precision else []
    # The caches' precision changes the executables, not the weights file.
    kv_cache = ["--kv-cache", args.kv_cache] if args.kv_cache else []
    for spec in args.specs:
        name = os.path.splitext(os.path.basename(spec))[0]
        if args.precision:
            name += "-" + args.precision
        if args.kv_cache:
            name += "-kv" + args.kv_cache
        if args.quantize:
            name += "-quantized-file"
        if args.bench:
            models.append(bench_model(args, spec, name, precision + kv_cache))
            continue
        weights = f"{name}.safetensors"
        must([args.tmc, "init-weights", spec, "-o", os.path.join(args.out, weights), "--seed",
              "7"])
        if args.quantize:
            # Both executables load the `tmc quantize` file instead.
            f32 = os.path.join(args.out, weights)
            weights = f"{name}.quantized.safetensors"
            must([args.tmc, "quantize", spec, "--weights", f32, "-o",
                  os.path.join(args.out, weights)] + precision)
            os.remove(f32)
        host = os.path.join(host_dir, name)
        # On the host both executables run here, so both are compiled for
        # this CPU alone (`--target native`): the multi-ISA default would
        # compile two or three variants of every kernel of which one runs.
        target = ["--target", "native"] if args.on_host else []
        must([args.tmc, "compile", spec, "-o", host] + target + precision + kv_cache)
        if args.on_host:
            # The GPU schedules compiled for this CPU (GpuLoops.h): the
            # same check without a GPU, as ctest runs it.
            env = dict(os.environ, TMC_GPU_SCHEDULE_ON_HOST="1")
            must([args.tmc, "compile", spec, "-o", os.path.join(args.out, name)] + target
                 + precision + kv_cache, env=env)
        else:
            must([args.tmc, "compile", spec, "--target", "cuda", "-o",
                  os.path.join(args.out, name)] + precision + kv_cache)
        wpath = os.path.join(args.out, weights)
        # An encoder-decoder model also takes a source (the encoder's input).
        extra = []
        first = run([host, "--weights", wpath, "--tokens", PROMPT, "--output", os.devnull])
        if first.returncode == 2 and "--source-tokens is required" in first.stderr:
            extra = ["--source-tokens", SOURCE]
        must([host, "--weights", wpath, "--tokens", PROMPT, "--output",
              os.path.join(args.out, f"{name}.host.npy")] + extra)
        model = {"name": name, "weights": weights, "output": f"{name}.host.npy", "args": extra}
        gen = run([host, "--weights", wpath, "--tokens", PROMPT, "--max-new", str(STEPS),
                   "--json", "--output", os.path.join(args.out, f"{name}.host-gen.npy")] + extra)
        if gen.returncode == 0:
            model["generated"] = json.loads(gen.stdout)["generated"]
            model["generated_output"] = f"{name}.host-gen.npy"
        models.append(model)
        print(f"{name}: prepared" + (" (with generation)" if "generated" in model else ""))
    shutil.rmtree(host_dir)
    bundle = os.path.join(args.out, "bundle.json")
    existing = json.load(open(bundle))["models"] if os.path.exists(bundle) else []
    keep = [m for m in existing if m["name"] not in {n["name"] for n in models}]
    with open(bundle, "w") as f:
        json.dump({"prompt": PROMPT, "steps": STEPS, "models": keep + models}, f, indent=1)
    return 0


def bench_model(args, spec, name, flags):
    """A model too large to carry with its weights: its manifest goes
    instead, and `check` writes seeded weights there and times it."""
    must([args.tmc, "compile", spec, "--target", "cuda", "-o", os.path.join(args.out, name)]
         + flags)
    manifest = json.loads(must([args.tmc, "manifest", spec, "--json"]).stdout)
    print(f"{name}: prepared for timing only")
    return {"name": name, "bench": True, "manifest": manifest}


def write_weights(numpy, manifest, path):
    """Seeded N(0, 0.02) weights in safetensors, f32 or f16 as the manifest
    says (the format: an 8-byte header length, a JSON header, the data)."""
    rng = numpy.random.default_rng(7)
    header, blobs, offset = {}, [], 0
    for tensor in manifest:
        dtype = {"F32": "<f4", "F16": "<f2", "BF16": None}[tensor["dtype"]]
        if dtype is None:
            sys.exit(f"error: {tensor['name']}: BF16 weights are not made here")
        data = (rng.standard_normal(tensor["shape"], dtype="f4") * 0.02).astype(dtype).tobytes()
        header[tensor["name"]] = {"dtype": tensor["dtype"], "shape": tensor["shape"],
                                  "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def bench(numpy, model, d):
    weights = os.path.join(d, model["name"] + ".safetensors")
    if not os.path.exists(weights):
        write_weights(numpy, model["manifest"], weights)
    prompt = ",".join(str(i % 50 + 1) for i in range(128))
    result = run([os.path.join(d, model["name"]), "--weights", weights, "--tokens", prompt,
                  "--max-new", "32", "--bench"])
    lines = [l for l in result.stdout.splitlines() if l.startswith("bench:")]
    if result.returncode != 0 or not lines:
        print(f"FAIL {model['name']}: exit {result.returncode}: {result.stderr.strip()}")
        return False
    print(f"time {model['name']}: {lines[-1]}")
    return True


def compare(numpy, got_path, want_path):
    got, want = numpy.load(got_path), numpy.load(want_path)
    if got.shape != want.shape:
        return float("inf"), f"shape {got.shape} vs {want.shape}"
    scale = max(float(numpy.abs(want).max()), 1e-30)
    return float(numpy.abs(got.astype("f8") - want.astype("f8")).max()) / scale, ""


def check(args):
    import numpy
    with open(os.path.join(args.dir, "bundle.json")) as f:
        bundle = json.load(f)
    failures = 0
    for model in bundle["models"]:
        name, d = model["name"], args.dir
        if model.get("bench"):
            failures += not bench(numpy, model, d)
            continue
        exe, weights = os.path.join(d, name), os.path.join(d, model["weights"])
        out = os.path.join(d, f"{name}.cuda.npy")
        result = run([exe, "--weights", weights, "--tokens", bundle["prompt"], "--output", out]
                     + model["args"])
        if result.returncode != 0:
            print(f"FAIL {name}: exit {result.returncode}: {result.stderr.strip()}")
            failures += 1
            continue
        err, why = compare(numpy, out, os.path.join(d, model["output"]))
        line = f"{name}: prompt max error {err:.2e} of the largest value"
        ok = err <= args.tolerance
        if "generated" in model:
            gout = os.path.join(d, f"{name}.cuda-gen.npy")
            gen = run([exe, "--weights", weights, "--tokens", bundle["prompt"], "--max-new",
                       str(bundle["steps"]), "--json", "--output", gout] + model["args"])
            if gen.returncode != 0:
                line += f"; generation exit {gen.returncode}: {gen.stderr.strip()}"
                ok = False
            else:
                tokens = json.loads(gen.stdout)["generated"]
                gerr, gwhy = compare(numpy, gout, os.path.join(d, model["generated_output"]))
                same = tokens == model["generated"]
                want = model["generated"]
                verdict = "same" if same else f"{tokens} vs host {want}"
                line += (f"; {bundle['steps']} greedy steps: tokens {verdict}, "
                         f"logits max error {gerr:.2e} {gwhy}")
                ok = ok and same and gerr <= args.tolerance
                # Without --output the prompt computes its last row's logits
                # alone (last_row_only): the same tokens.
                alone = run([exe, "--weights", weights, "--tokens", bundle["prompt"],
                             "--max-new", str(bundle["steps"]), "--json"] + model["args"])
                alone_tokens = json.loads(alone.stdout)["generated"] \
                    if alone.returncode == 0 else f"exit {alone.returncode}"
                if alone_tokens != want:
                    line += f"; without --output: {alone_tokens}"
                    ok = False
        print(("ok   " if ok else "FAIL ") + line + (f" ({why})" if why else ""))
        failures += not ok
    print(f"{len(bundle['models']) - failures} of {len(bundle['models'])} models agree "
          f"(tolerance {args.tolerance:g})")
    return 1 if failures else 0


def main():
    global TIMEOUT
    parser = argparse.ArgumentParser(description="CUDA executables checked against the host")
    sub = parser.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--tmc", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--precision")
    p.add_argument("--kv-cache")
    p.add_argument("--quantize", action="store_true",
                   help="run on the `tmc quantize` file of the seeded weights")
    p.add_argument("--bench", action="store_true",
                   help="time these models instead (128-token prompt, 32 greedy steps): "
                        "their weights are made where `check` runs")
    p.add_argument("--on-host", action="store_true",
                   help="compile the GPU schedules for this CPU (TMC_GPU_SCHEDULE_ON_HOST=1) "
                        "instead of --target cuda")
    p.add_argument("specs", nargs="+")
    c = sub.add_parser("check")
    c.add_argument("dir")
    c.add_argument("--tolerance", type=float, default=1e-4)
    c.add_argument("--timeout", type=int, default=TIMEOUT,
                   help="seconds each executable may run before it counts as failed")
    h = sub.add_parser("on-host", help="prepare --on-host for each precision, then check")
    h.add_argument("--tmc", required=True)
    h.add_argument("--out", required=True)
    h.add_argument("--precisions", default="f32")
    h.add_argument("--tolerance", type=float, default=1e-4)
    h.add_argument("specs", nargs="+")
    args = parser.parse_args()
    TIMEOUT = getattr(args, "timeout", TIMEOUT)
    if args.verb == "on-host":
        shutil.rmtree(args.out, ignore_errors=True)
        args.on_host, args.bench, args.quantize, args.dir = True, False, False, args.out
        args.kv_cache = None  # the specs' own kv_cache keys
        for precision in args.precisions.split(","):
            args.precision = None if precision == "f32" else precision
            prepare(args)
        return check(args)
    return prepare(args) if args.verb == "prepare" else check(args)


if __name__ == "__main__":
    sys.exit(main())
