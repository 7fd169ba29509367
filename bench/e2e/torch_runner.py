"""bench/e2e/torch_runner.py - PyTorch (Debian python3-torch) as a benchmark peer.

usage: torch_runner.py --check CHECK.json --weights W --tokens 1,2 [--source 3,4]
                       [--decode] --threads N --runs K
       torch_runner.py --sgemm --threads N        (the machine's sgemm peak through torch.mm)

With --serve the model is loaded once and each line "run K" on stdin gets one
JSON line back (the benchmark's rounds reuse one process per engine).
Times the prompt run (and with --decode one decoding step after it, on the
caches it filled) K times after a warm-up, in inference mode, and prints one
JSON line {prefill_ms: [..], decode_ms: [..], peak_rss_bytes}. The caller sets
the environment that makes torch fast here (OMP_WAIT_POLICY=PASSIVE,
OPENBLAS_CORETYPE; see bench/e2e/run.py).
"""
import argparse
import json
import os
import resource
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_model  # noqa: E402


def ids(text):
    return torch.tensor([int(t) for t in text.split(",")], dtype=torch.int64)


def peak_rss_bytes():
    """VmHWM: ru_maxrss survives execve, so it would report the parent's peak."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def sgemm_peak(n=2048, repeats=10):
    a, b = torch.randn(n, n), torch.randn(n, n)
    c = torch.empty(n, n)
    best = float("inf")
    for _ in range(repeats + 2):
        start = time.perf_counter()
        torch.mm(a, b, out=c)
        best = min(best, time.perf_counter() - start)
    return 2.0 * n ** 3 / best / 1e9


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check")
    parser.add_argument("--weights")
    parser.add_argument("--tokens")
    parser.add_argument("--source")
    parser.add_argument("--decode", action="store_true")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sgemm", action="store_true")
    parser.add_argument("--serve", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.sgemm:
        print(json.dumps({"sgemm_gflops": sgemm_peak(), "threads": torch.get_num_threads()}))
        return
    model = torch_model.build(args.check, args.weights)
    tokens = ids(args.tokens)
    source = ids(args.source) if args.source else None

    def measure(runs):
        prefill, decode = [], []
        with torch.inference_mode():
            for run in range(runs + 1):  # run 0 warms up
                start = time.perf_counter()
                if args.decode:
                    _, past = model.prefill(tokens)
                else:
                    model(tokens, source)
                p = (time.perf_counter() - start) * 1e3
                d = None
                if args.decode:
                    start = time.perf_counter()
                    model.step(tokens[:1], past)
                    d = (time.perf_counter() - start) * 1e3
                if run > 0:
                    prefill.append(p)
                    if d is not None:
                        decode.append(d)
        rss = peak_rss_bytes()
        print(json.dumps({"prefill_ms": prefill, "decode_ms": decode, "peak_rss_bytes": rss,
                          "threads": torch.get_num_threads()}), flush=True)

    if not args.serve:
        measure(args.runs)
        return
    # --serve: one measurement of K runs per "run K" line on stdin, the model loaded once.
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if line.startswith("run "):
            measure(int(line.split()[1]))

if __name__ == "__main__":
    main()
