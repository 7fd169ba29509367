#!/usr/bin/python3
"""CUDA executables on a real GPU against the host executables of the same specs.

A GPU machine lent through the device tool has no compiler toolchain (no MLIR,
no Halide, no network to install them), so everything is compiled here and
only executables, weights and inputs travel:

  scripts/gpu_parity.py prepare --tmc build/bin/tmc DIR [--max-mb 60]
      compiles every parity spec (tests/parity/specs.py) for the host and for
      cuda, writes seeded weights and the cases (a long input, one token, and
      greedy decoding with --output for models that generate), and gathers
      what the GPU needs under DIR/carry (specs whose weights would pass the
      carry limit are left out and listed);
  bash DIR/carry/run.sh                     (on the GPU machine, OUT set)
      runs each case's CUDA executable, writing $OUT/gpu-parity.tgz;
  scripts/gpu_parity.py compare DIR ARCHIVE
      runs the host executables on the same cases and compares: the max
      relative error max|gpu - host| / max|host| must be <= 1e-5 and the
      generated tokens equal. The host executables are held to PyTorch by the
      parity suite (ctest -L parity), so this carries parity to the GPU.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "parity"))
import specs  # noqa: E402

TOLERANCE = 1e-5
RUN_SH = """#!/bin/bash
# Runs every case's CUDA executable on the GPU; the outputs in one archive.
cd "$(dirname "$0")"
work=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv > $work/gpu.txt 2>&1
i=0
while read -r dir args; do
  [ -z "$dir" ] && continue
  i=$((i+1))
  timeout 120 ./$dir/model-cuda --weights $dir/w.safetensors $args --output $work/case$i.npy \\
      --json > $work/case$i.stdout 2> $work/case$i.stderr
  echo "case$i rc=$? $dir $args" >> $work/summary.txt
done < cases.txt
tar czf $OUT/gpu-parity.tgz -C $work .
cat $work/gpu.txt; grep -v "rc=0" $work/summary.txt; echo "$(grep -c "rc=0" $work/summary.txt) of $i ran"
"""


def run(cmd):
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode:
        sys.exit(f"failed ({result.returncode}): {' '.join(cmd)}\n{result.stderr}")
    return result.stdout


def cases_of(config, directory):
    """The inputs of one spec: a long one, one token, greedy decoding."""
    n, vocab = config["max_seq"], config["vocab"]

    def tokens(count, shift=0):
        return ",".join(str((i * 7 + 3 + shift) % vocab) for i in range(count))

    source = ""
    if config["encoder"] is not None and config["decoder"] is not None:
        source = f" --source-tokens {tokens(min(n, 12), 1)}"
    cases = [f"{directory}{source} --tokens {tokens(min(n, 48))}",
             f"{directory}{source} --tokens {tokens(1)}"]
    if config["decoder"] is not None and config["output"]["kind"] == "lm_head":
        cases.append(f"{directory}{source} --tokens {tokens(5)} --max-new {min(8, n - 5)}")
    return cases


def prepare(args):
    carry = os.path.join(args.dir, "carry")
    shutil.rmtree(carry, ignore_errors=True)
    os.makedirs(carry)
    names = run([sys.executable, os.path.join(HERE, "..", "tests", "parity", "specs.py"),
                 "--list"]).split()
    cases, left_out, cpu_only, carried = [], [], [], 0
    for name in names:
        directory = name.replace(":", "-")
        work = os.path.join(args.dir, directory)
        os.makedirs(work, exist_ok=True)
        path = specs.write(name, work)
        config = json.loads(run([args.tmc, "check", "--json", path]))["config"]
        # The CUDA targets refuse bf16, int8 and q4 linears at compile time.
        layers = [layer for stack in (config["encoder"], config["decoder"]) if stack
                  for layer in stack["layer_specs"]]
        if any(p != "f32" for p in [config["precision"]] + [l["precision"] for l in layers]):
            cpu_only.append(name)
            continue
        for target in ("host", "cuda"):
            run([args.tmc, "compile", path, "--target", target, "-o",
                 os.path.join(work, f"model-{target}")])
        run([args.tmc, "init-weights", path, "-o", os.path.join(work, "w.safetensors"),
             "--seed", "1"])
        size = sum(os.path.getsize(os.path.join(work, f)) for f in ("model-cuda", "w.safetensors"))
        if carried + size > args.max_mb * 1e6:
            left_out.append(name)
            continue
        carried += size
        os.makedirs(os.path.join(carry, directory))
        for f in ("model-cuda", "w.safetensors"):
            shutil.copy(os.path.join(work, f), os.path.join(carry, directory, f))
        cases += cases_of(config, directory)
    with open(os.path.join(carry, "cases.txt"), "w") as f:
        f.write("\n".join(cases) + "\n")
    with open(os.path.join(carry, "run.sh"), "w") as f:
        f.write(RUN_SH)
    os.chmod(os.path.join(carry, "run.sh"), 0o755)
    print(f"{len(cases)} cases of {len(names) - len(left_out) - len(cpu_only)} specs in {carry} "
          f"({carried / 1e6:.1f} MB)" + (f"; left out (size): {left_out}" if left_out else "")
          + (f"; CPU-only precision: {cpu_only}" if cpu_only else ""))


def compare(args):
    out = tempfile.mkdtemp()
    with tarfile.open(args.archive) as archive:
        archive.extractall(out)
    lines = [line.split() for line in open(os.path.join(args.dir, "carry", "cases.txt")) if line.strip()]
    failures, worst = [], (0.0, "")
    for i, (directory, *flags) in enumerate(lines, 1):
        host = os.path.join(out, f"host{i}.npy")
        stdout = run([os.path.join(args.dir, directory, "model-host"), "--weights",
                      os.path.join(args.dir, directory, "w.safetensors"), *flags,
                      "--output", host, "--json"])
        gpu_file = os.path.join(out, f"case{i}.npy")
        if not os.path.exists(gpu_file):
            failures.append(f"case {i} ({directory}): no GPU output: "
                            + open(os.path.join(out, f"case{i}.stderr")).read().strip())
            continue
        a, b = np.load(host), np.load(gpu_file)
        gpu_json = json.loads(open(os.path.join(out, f"case{i}.stdout")).read().strip().splitlines()[-1])
        host_json = json.loads(stdout.strip().splitlines()[-1])
        error = (np.abs(a - b).max() / max(np.abs(a).max(), 1e-6)) if a.shape == b.shape else np.inf
        if error > worst[0]:
            worst = (error, f"{directory} {' '.join(flags)[:60]}")
        if not error <= TOLERANCE or host_json["generated"] != gpu_json["generated"]:
            failures.append(f"case {i} ({directory}): relative error {error:.3g}, tokens "
                            f"{host_json['generated']} host, {gpu_json['generated']} GPU")
    print(open(os.path.join(out, "gpu.txt")).read().strip())
    print(f"{len(lines)} cases: worst relative error GPU vs host {worst[0]:.3g} ({worst[1]})")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--tmc", required=True)
    p.add_argument("--max-mb", type=float, default=60.0, help="the device tool's carry limit")
    p.add_argument("dir")
    c = sub.add_parser("compare")
    c.add_argument("dir")
    c.add_argument("archive")
    args = parser.parse_args()
    return prepare(args) if args.command == "prepare" else compare(args)


if __name__ == "__main__":
    sys.exit(main() or 0)
