"""bench/e2e/small_models.py - small models' prefill against this machine's FMA peak (#26).

usage: bench/e2e/small_models.py [--build-dir build] [--work DIR] [--results DIR]
                                 [--threads 1,2] [--rounds 3] [--runs 5] [--tokens 128]
                                 [--specs A.tm,B.tm,...]

The users who most need a standalone binary run small models: d_model
128-512, rotary positions, gated FFNs, large vocabularies. For every spec
(default: bench/e2e/small/*.tm and examples/llama-style.tm; six more shapes,
written after the defaults to check them on shapes they were not shaped on,
are in bench/e2e/small/extra/: pass them with --specs) this compiles it
with the default schedules (`tmc compile`, as a user does), writes seeded
weights, and times the executable's prompt run over T tokens (`--bench`,
every row's logits: prefill_ms) in R rounds, models in a shuffled order per
round; a figure is the median over rounds of each round's median. The
machine's FMA peak (bench_fma_peak: compiler/tune/FmaPeak.cpp, as `tmc tune`
measures it) is measured in every round and its best counts; so is a cache
line's round trip between the first two CPUs (core_round_trip_ns in the
results), which tells where a VM's vCPUs sat: one core's two threads (~70 ns:
the 2-thread peak is then the 1-thread one), one CCD or two (~190 and ~440 ns
on an AMD EPYC Zen 5). Compare runs of one placement.

FLOPs are tmc's own count (`tmc check --json`: flops_per_token.prefill, 2
per multiply-accumulate of every matrix product, attention over the keys
each query sees) of the same spec with max_seq = T, times T: exactly the
run's products. The rate end to end is FLOPs / prefill time, then read
against the peak. TMR_PROFILE splits each prompt run by kernel: every GEMM's
rate (2·T·K·N per call) and share, and the largest elementwise kernel's
share (#26's targets: >= 80% of the peak end to end; no elementwise kernel
above 3% of a prefill).

Writes RESULTS/small-models-DATE.json and prints a table.
"""
import argparse
import glob
import json
import os
import random
import re
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from run import build_fma_peak, fma_peak_probe, last_json, loadavg, log, machine, run  # noqa: E402

SEED = 1
GEMM_NAME = re.compile(r"linear_k(\d+)_n(\d+)")


class SmallModel:
    def __init__(self, spec, work, tmc, tokens):
        self.spec = spec
        self.name = os.path.splitext(os.path.basename(spec))[0]
        self.dir = os.path.join(work, self.name)
        os.makedirs(self.dir, exist_ok=True)
        self.exe = os.path.join(self.dir, self.name)
        self.weights = os.path.join(self.dir, "weights.safetensors")
        check = json.loads(run([tmc, "check", spec, "--json"]))
        if "encoder" in check or not check["output"].startswith("lm_head"):
            sys.exit(f"small_models.py: {spec} is not a decoder with an LM head")
        if check["max_seq"] < tokens:
            sys.exit(f"small_models.py: {spec} has max_seq {check['max_seq']} < --tokens {tokens}")
        self.check = check
        # tmc's FLOP count of a T-token prompt: the same spec with max_seq = T.
        with open(spec) as f:
            text = f.read()
        counted = os.path.join(self.dir, "counted.tm")
        with open(counted, "w") as f:
            f.write(re.sub(r"max_seq\s*=\s*\d+", f"max_seq = {tokens}", text, count=1))
        per_token = json.loads(run([tmc, "check", counted, "--json"]))["flops_per_token"]["prefill"]
        self.flops = per_token * tokens
        rng = np.random.default_rng(SEED)
        self.tokens = ",".join(str(int(t)) for t in rng.integers(0, check["vocab"], tokens))
        self.T = tokens

    def prepare(self, tmc):
        log(f"== {self.name}: tmc compile {os.path.relpath(self.spec, REPO)}")
        start = time.monotonic()
        run([tmc, "compile", self.spec, "-o", self.exe])
        log(f"   {time.monotonic() - start:.1f} s; d_model {self.check['d_model']}, "
            f"vocab {self.check['vocab']}, {self.flops / 1e9:.2f} GFLOP per prompt")
        if not os.path.exists(self.weights):
            run([tmc, "init-weights", self.spec, "-o", self.weights, "--seed", str(SEED)])

    def args(self, threads, runs):
        return [self.exe, "--weights", self.weights, "--tokens", self.tokens, "--bench",
                "--bench-runs", str(runs), "--threads", str(threads)]

    def time(self, threads, runs):
        return last_json(run(self.args(threads, runs) + ["--json"]))["prefill_ms"]

    def profile(self, threads, runs):
        """Per kernel: ms per prompt run, and the GEMMs' rates."""
        path = os.path.join(self.dir, f"profile-{threads}t.json")
        run(self.args(threads, runs), env=dict(os.environ, TMR_PROFILE=path))
        with open(path) as f:
            entries = [e for e in json.load(f) if e["phase"] == "prompt"]
        kernels = {}
        for e in entries:
            k = kernels.setdefault(e["kernel"], {"ms": 0.0, "calls": 0})
            k["ms"] += e["ms"]
            k["calls"] += e["calls"]
        total = sum(k["ms"] for k in kernels.values())
        out = []
        for name, k in sorted(kernels.items(), key=lambda kv: -kv[1]["ms"]):
            row = {"kernel": name, "share": k["ms"] / total, "ms_per_call": k["ms"] / k["calls"]}
            m = GEMM_NAME.search(name)
            if m:
                K, N = int(m.group(1)), int(m.group(2))
                row["gflops"] = 2 * self.T * K * N / (row["ms_per_call"] * 1e6)
                row["K"], row["N"] = K, N
            out.append(row)
        return {"kernels": out}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    parser.add_argument("--work", default=None, help="artifacts (default: BUILD/bench-small)")
    parser.add_argument("--results", default=os.path.join(REPO, "bench", "results"))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--specs", default=None, help="comma-separated specs (default: the set)")
    args = parser.parse_args()
    build_dir = os.path.abspath(args.build_dir)
    tmc = os.path.join(build_dir, "bin", "tmc")
    work = args.work or os.path.join(build_dir, "bench-small")
    threads = [int(t) for t in args.threads.split(",")]
    specs = args.specs.split(",") if args.specs else \
        sorted(glob.glob(os.path.join(HERE, "small", "*.tm"))) + \
        [os.path.join(REPO, "examples", "llama-style.tm")]
    build_fma_peak(build_dir)

    load_before = loadavg()
    models = [SmallModel(os.path.abspath(s), work, tmc, args.tokens) for s in specs]
    for model in models:
        model.prepare(tmc)
    peak = {t: 0.0 for t in threads}
    samples = {}
    rng = random.Random(SEED)
    log(f"== timing: {args.rounds} rounds x {args.runs} runs (load {load_before})")
    round_trips = []
    for r in range(args.rounds):
        gflops_by_threads, round_trip = fma_peak_probe(build_dir, threads)
        round_trips.append(round_trip)
        for t, gflops in gflops_by_threads.items():
            peak[t] = max(peak[t], gflops)
        for t in threads:
            order = list(models)
            rng.shuffle(order)
            for model in order:
                samples.setdefault((model.name, t), []).append(model.time(t, args.runs))
        log(f"   round {r + 1}/{args.rounds} done (load {loadavg()}; "
            f"core round trip {round_trip} ns before it)")

    results = []
    for model in models:
        for t in threads:
            ms = statistics.median(samples[(model.name, t)])
            gflops = model.flops / (ms * 1e6)
            prof = model.profile(t, args.runs)
            gemm_share = sum(k["share"] for k in prof["kernels"] if "gflops" in k)
            elementwise = max((k for k in prof["kernels"]
                               if "gflops" not in k and "attention" not in k["kernel"]),
                              key=lambda k: k["share"], default=None)
            results.append({
                "model": model.name, "spec": os.path.relpath(model.spec, REPO), "threads": t,
                "tokens": model.T, "d_model": model.check["d_model"],
                "vocab": model.check["vocab"], "flops": model.flops,
                "prefill_ms": ms, "prefill_ms_rounds": samples[(model.name, t)],
                "gflops": gflops, "of_peak": gflops / peak[t], "gemm_share": gemm_share,
                "largest_elementwise": elementwise, "profile": prof["kernels"]})

    log(f"\nFMA peak (bench_fma_peak, best of {args.rounds} rounds): " +
        ", ".join(f"{peak[t]:.1f} GFLOP/s at {t} thread(s)" for t in threads))
    log(f"{'model':<12} {'d':>4} {'vocab':>6} {'thr':>3} | {'ms':>7} {'GFLOP/s':>8} {'peak':>5} |"
        f" {'GEMMs':>5} {'largest elementwise kernel':>36} | slowest GEMM (K x N: % of peak)")
    for row in results:
        e = row["largest_elementwise"]
        gemms = [k for k in row["profile"] if "gflops" in k]
        slow = min(gemms, key=lambda k: k["gflops"]) if gemms else None
        slow_text = f"{slow['K']} x {slow['N']}: {100 * slow['gflops'] / peak[row['threads']]:.0f}%" \
            f" ({100 * slow['share']:.0f}% of time)" if slow else "-"
        elem_text = f"{e['kernel'][:28]} {100 * e['share']:.1f}%" if e else "-"
        log(f"{row['model']:<12} {row['d_model']:>4} {row['vocab']:>6} {row['threads']:>3} | "
            f"{row['prefill_ms']:7.2f} {row['gflops']:8.1f} {100 * row['of_peak']:4.0f}% | "
            f"{100 * row['gemm_share']:4.0f}% {elem_text:>36} | {slow_text}")

    os.makedirs(args.results, exist_ok=True)
    stamp = time.strftime("%Y-%m-%d-%H%M", time.gmtime())
    path = os.path.join(args.results, f"small-models-{stamp}.json")
    with open(path, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   "machine": machine(), "loadavg_before": load_before,
                   "loadavg_after": loadavg(), "rounds": args.rounds, "runs": args.runs,
                   "fma_peak_gflops": {str(t): peak[t] for t in threads},
                   "core_round_trip_ns": round_trips,
                   "results": results}, f, indent=1)
    log(f"wrote {os.path.relpath(path, REPO)}")


if __name__ == "__main__":
    main()
