#!/usr/bin/env python3
# run_cuda_test.py - One spec compiled for `--target cuda`, checked without a GPU.
#
#   run_cuda_test.py --tmc build/bin/tmc --spec SPEC.tm --work DIR
#                    [--opt 0] [--expect KIND,KIND,...] [--precision P]
#   run_cuda_test.py --tmc build/bin/tmc --usage --work DIR
#
# Compiles SPEC for CUDA twice: `--emit=device -o DIR` (each kernel's PTX) and
# an executable. Every .ptx must assemble with ptxas for sm_80 and sm_90 (the
# test is skipped, exit 77, when /usr/local/cuda/bin/ptxas or $PTXAS is
# missing); every kernel kind named by --expect must have PTX. The executable
# then runs on seeded weights: on a machine without an NVIDIA driver it must
# exit with status 1 and say so (no abort, no core dump); where a driver
# and a GPU exist it must run (exit 0; tests/parity checks its numbers with
# TMC_PARITY_TARGET=cuda). --usage checks the command-line errors instead.

import argparse
import glob
import os
import shutil
import subprocess
import sys

SKIP = 77
NO_DRIVER = "this executable was compiled for CUDA, but no CUDA driver was found"


def run(cmd, **kwargs):
    return subprocess.run(cmd, capture_output=True, text=True, **kwargs)


def must(cmd, what):
    result = run(cmd)
    if result.returncode != 0:
        raise RuntimeError(f"{what} failed ({result.returncode}): {' '.join(cmd)}\n"
                           f"{result.stdout}{result.stderr}")
    return result


def has_cuda_gpu():
    """Whether a CUDA driver loads (as Halide loads it) and sees a device."""
    import ctypes
    for name in ("libcuda.so", "libcuda.so.1"):
        try:
            cuda = ctypes.CDLL(name)
        except OSError:
            continue
        count = ctypes.c_int(0)
        return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 \
            and count.value > 0
    return False


def check_usage(tmc, work):
    spec = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e", "specs",
                        "decoder-gpt.tm")
    failures = []
    out = os.path.join(work, "usage-ptx")
    for cmd, needle in [
        ([tmc, "compile", spec, "--emit=device", "-o", out], "--emit=device"),
        ([tmc, "compile", spec, "--emit=device", "--target", "x86-64-avx2", "-o", out],
         "--target cuda"),
        ([tmc, "compile", spec, "--emit=device", "--target", "cuda"], "-o DIR"),
        ([tmc, "compile", spec, "--target", "cuda-sm75", "-o", out], "cuda-sm86"),
    ]:
        result = run(cmd)
        print(f"$ {' '.join(cmd[1:])}\n  -> {result.returncode}: {result.stderr.strip()}")
        if result.returncode != 2 or needle not in result.stderr:
            failures.append(f"{' '.join(cmd[1:])}: expected exit 2 and '{needle}', got "
                            f"{result.returncode}: {result.stderr.strip()}")
    if os.path.exists(out):
        failures.append(f"a refused command wrote {out}")
    return failures


def check_spec(args):
    ptxas = os.environ.get("PTXAS", "/usr/local/cuda/bin/ptxas")
    if not shutil.which(ptxas):
        print(f"SKIPPED: no ptxas at {ptxas} (install the CUDA toolkit, or set PTXAS)")
        return None
    name = os.path.splitext(os.path.basename(args.spec))[0]
    opt = [f"-O{args.opt}"] if args.opt is not None else []
    if args.precision:
        opt += ["--precision", args.precision]
    ptx_dir = os.path.join(args.work, "ptx")
    shutil.rmtree(ptx_dir, ignore_errors=True)
    must([args.tmc, "compile", args.spec, "--target", "cuda", "--emit=device", "-o", ptx_dir]
         + opt, "tmc compile --emit=device")
    failures = []
    modules = sorted(glob.glob(os.path.join(ptx_dir, "*.ptx")))
    if not modules:
        failures.append(f"--emit=device wrote no .ptx into {ptx_dir}")
    for path in modules:
        with open(path) as f:
            text = f.read()
        if ".entry" not in text or ".target sm_80" not in text:
            failures.append(f"{path}: not PTX for sm_80 with a kernel entry")
        for gpu in ("sm_80", "sm_90"):
            result = run([ptxas, "--gpu-name", gpu, path, "-o", os.devnull])
            if result.returncode != 0:
                failures.append(f"ptxas --gpu-name {gpu} {path}: {result.stderr.strip()}")
    kernels = [os.path.basename(p)[len("tmk_"):-len(".ptx")] for p in modules]
    for kind in filter(None, (args.expect or "").split(",")):
        if not any(k == kind or k.startswith(kind + "_") for k in kernels):
            failures.append(f"no PTX for a '{kind}' kernel (have: {', '.join(kernels)})")
    print(f"{name}: {len(modules)} PTX modules assembled for sm_80 and sm_90: "
          f"{', '.join(kernels)}")

    exe = os.path.join(args.work, name)
    weights = os.path.join(args.work, "weights.safetensors")
    must([args.tmc, "compile", args.spec, "--target", "cuda", "-o", exe] + opt,
         "tmc compile --target cuda")
    must([args.tmc, "init-weights", args.spec, "-o", weights, "--seed", "1"], "tmc init-weights")
    result = run([exe, "--weights", weights, "--tokens", "1,2,3", "--output",
                  os.path.join(args.work, "out.npy")], cwd=args.work)
    print(f"{name}: executable -> status {result.returncode}: {result.stderr.strip()}")
    if has_cuda_gpu():
        if result.returncode != 0:
            failures.append(f"with a CUDA GPU present the executable failed: "
                            f"{result.stderr.strip()}")
    else:
        if result.returncode != 1:
            failures.append(f"without a GPU the executable must exit 1, got {result.returncode}"
                            + (" (killed by a signal)" if result.returncode < 0 else ""))
        if NO_DRIVER not in result.stderr or not result.stderr.startswith("error: "):
            failures.append(f"expected 'error: {NO_DRIVER}...', got: {result.stderr.strip()}")
        if glob.glob(os.path.join(args.work, "core*")):
            failures.append("the executable dumped core")
    return failures


def main():
    parser = argparse.ArgumentParser(description="tmc --target cuda without a GPU")
    parser.add_argument("--tmc", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--spec")
    parser.add_argument("--opt", type=int, choices=[0, 1, 2])
    parser.add_argument("--expect", help="kernel kinds (name prefixes) that must have PTX")
    parser.add_argument("--precision", help="tmc compile --precision (default: the spec's)")
    parser.add_argument("--usage", action="store_true")
    args = parser.parse_args()
    # The executable runs with the work folder as its cwd: name it absolutely.
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    failures = check_usage(args.tmc, args.work) if args.usage else check_spec(args)
    if failures is None:
        return SKIP
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print(f"error: {e}")
        sys.exit(1)
