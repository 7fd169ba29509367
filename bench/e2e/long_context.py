"""bench/e2e/long_context.py - long sequences under sparse masks: tmc against PyTorch and ONNX
Runtime running the same weights with the equivalent dense mask, T = 512 .. 16384, one run.

usage: bench/e2e/long_context.py [--build-dir build] [--work DIR] [--results bench/results]
           [--lengths 512,1024,2048,4096,8192,16384] [--models decoder,longformer,bigbird]
           [--peers torch,ort] [--rounds R] [--runs K] [--threads 2] [--check-lengths 512,4096]
           [--mem-limit-gib 20] [--timeout 900]

Three models (long_context_peers.py SPECS; d_model 256, 4 heads, d_ff 1024, 4 layers,
max_seq 16384, so one compiled executable serves every T): (a) a rope/rmsnorm/swiglu causal
decoder with `causal + sliding_window(size = 256)` and an LM head, (b) a Longformer-style
encoder, `padding + sliding_window(size = 256) + global(tokens = [0, 1, 2, 3])`, (c) a
BigBird-style encoder, window 192, two global tokens and 3 random keys per row. Weights are
`tmc init-weights --seed 1`; PyTorch and ONNX Runtime (the same module exported by torch.onnx,
the sequence axis dynamic) read the same file. The peers cannot express these masks other than
densely: they get the [T, T] mask that tests/parity/torch_model.py's mask_matrix builds from
the contract, as an additive f32 input (0 / -inf). Each is at its best as a user would run it:
inference mode, f32, torch's best attention path for a float mask (no SDPA in torch 1.13:
baddbmm with the mask, softmax, bmm, what nn.MultiheadAttention runs), OpenBLAS with
run.py's environment; ONNX Runtime with graph optimization "all", intra-op threads as given,
inter-op 1. Outputs are checked first (tmc against PyTorch and ORT at --check-lengths, and
against tests/parity's float64 model where T <= 1024); a mismatch stops the run.

Timing, per model and T: tmc's executable runs one process per measurement (`--bench`, a
warm-up and K runs, its median), as run.py's time_tmc; each peer serves from one process per
(model, T) (a warm-up run once, then K runs per measurement), so that its peak RSS (VmHWM) is
that point's. Rounds interleave the engines in a shuffled order; a figure is the median of the
rounds' medians, the spread the rounds' range. tmc's peak RSS is /usr/bin/time's %M. Default
rounds x runs: 5 x 3 up to 2k, 3 x 2 at 4k, 3 x 1 at 8k, 2 x 1 at 16k. A peer whose dense
attention would need more than --mem-limit-gib (long_context_peers.attention_bytes: the mask
and heads x T^2 f32 scores and softmax copies, calibrated on measured peaks) is skipped,
recorded with the estimate; peers run side by side when their estimates fit together, else
one after the other (16k), tmc interleaved with each in turn (so it has twice the rounds there);
a peer's crash, OOM or timeout is recorded, never fatal. Writes
RESULTS/long-context-DATE-HHMM.{json,svg} (time and peak RSS against T, log-log, least-squares
slopes in the legend; long_context_report.py) and prints markdown tables and the targets.
"""
import argparse
import hashlib
import json
import os
import queue
import random
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import long_context_peers as lcp  # noqa: E402
from long_context_report import NAMES, describe_mask, fit, lines_of, markdown, svg_plot, targets  # noqa: E402
import run as bench  # noqa: E402

GIB = 1 << 30


def schedule(length, args):
    """(rounds, runs per round) at a length: fewer at large T (about 25 minutes in all)."""
    rounds, runs = (5, 3) if length <= 2048 else (3, 2) if length <= 4096 else \
        (3, 1) if length <= 8192 else (2, 1)
    return args.rounds or rounds, args.runs or runs


class LCModel:
    def __init__(self, name, work, tmc, peers):
        self.name, self.tmc, self.peers = name, tmc, peers
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)
        self.spec = os.path.join(self.dir, f"{name}.tm")
        with open(self.spec, "w") as f:
            f.write(lcp.SPECS[name])
        self.check_path = os.path.join(self.dir, "check.json")
        with open(self.check_path, "w") as f:
            f.write(bench.run([tmc, "check", self.spec, "--json"]))
        with open(self.check_path) as f:
            self.check = json.load(f)
        self.config = self.check["config"]
        self.tokens = np.random.default_rng(bench.SEED).integers(0, self.config["vocab"],
                                                                 self.config["max_seq"])
        self.exe = os.path.join(self.dir, name)
        self.weights = os.path.join(self.dir, "weights.safetensors")
        self.onnx = os.path.join(self.dir, "model.onnx")

    def prepare(self):
        bench.log(f"== {self.name}: tmc compile {os.path.relpath(self.spec, bench.REPO)}")
        start = time.monotonic()
        bench.run([self.tmc, "compile", self.spec, "-o", self.exe])
        self.compile_s = time.monotonic() - start
        bench.log(f"   {self.compile_s:.1f} s, executable {os.path.getsize(self.exe) / 1e6:.2f} MB")
        bench.run([self.tmc, "init-weights", self.spec, "-o", self.weights, "--seed", str(bench.SEED)])
        if "ort" in self.peers:
            bench.log("   exporting ONNX (torch.onnx, opset 14, dynamic T, mask input)")
            lcp.export_onnx(self.check_path, self.weights, self.onnx)

    def inputs(self, length):
        """Paths of the token ids (int64) and dense mask (u8) files at a length."""
        # The mask file's name carries its terms' digest: a changed spec makes new ones.
        terms = json.dumps(lcp.stack_of(self.config)[0]["layer_specs"][0]["mask"], sort_keys=True)
        digest = hashlib.sha1(f"{terms} {self.config['max_seq']}".encode()).hexdigest()[:8]
        tokens = os.path.join(self.dir, f"tokens-{length}.i64")
        mask = os.path.join(self.dir, f"mask-{length}-{digest}.u8")
        if not os.path.exists(tokens):
            self.tokens[:length].astype("<i8").tofile(tokens)
        if "torch" in self.peers or "ort" in self.peers:
            if not os.path.exists(mask):
                lcp.dense_mask(self.config, length, mask)
        return tokens, mask

    def tmc_cmd(self, length):
        return [self.exe, "--weights", self.weights, "--tokens", bench.ids_text(self.tokens[:length])]

    def peer_cmd(self, engine, length, threads):
        tokens, mask = self.inputs(length)
        if engine == "torch":
            return [sys.executable, os.path.join(HERE, "long_context_peers.py"), "--check",
                    self.check_path, "--weights", self.weights, "--tokens-file", tokens, "--mask", mask,
                    "--threads", str(threads)]
        return ["node", os.path.join(bench.PEERS, "ort_mask_runner.mjs"), "--model", self.onnx,
                "--tokens-file", tokens, "--mask", mask, "--threads", str(threads)]


def check_outputs(model, length, threads, reference_max):
    """tmc's output against each peer's (and tests/parity's float64 model) at one length."""
    path = os.path.join(model.dir, f"tmc-{length}.npy")
    bench.run(model.tmc_cmd(length) + ["--output", path, "--threads", str(threads)])
    ours = np.load(path)[0]
    errors = {}
    if length <= reference_max:
        errors["float64 reference"] = bench.relative_error(
            ours, lcp.reference_output(model.config, model.weights, model.tokens[:length]))
    for engine in model.peers:
        out = os.path.join(model.dir, f"{engine}-{length}.f32")
        cmd = model.peer_cmd(engine, length, threads)
        bench.run(cmd + (["--output", out] if engine == "torch" else ["--check", out]),
                  env=bench.peer_env(threads, engine))
        errors[engine] = bench.relative_error(np.fromfile(out, "<f4").reshape(ours.shape), ours)
    bench.log(f"   T={length}: max |x - tmc| / max |tmc|: " +
              ", ".join(f"{k} {v:.1e}" for k, v in errors.items()))
    for name, error in errors.items():
        if not error <= bench.PARITY_TOLERANCE:
            raise RuntimeError(f"{model.name} at T={length}: {name}'s output differs from tmc's "
                               f"({error:.2e} > {bench.PARITY_TOLERANCE}); not timing unequal work")
    return errors


class PeerFailure(Exception):
    pass


class PeerProc:
    """A serving peer process (long_context_peers.py or ort_mask_runner.mjs with --serve)."""

    def __init__(self, cmd, log_path, threads, timeout, engine):
        self.log = open(log_path, "w")
        self.log_path = log_path
        self.proc = subprocess.Popen(cmd + ["--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True, env=bench.peer_env(threads, engine))
        self.lines = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self._read(timeout)  # {"ready": true}

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(1.0, deadline - time.monotonic()))
            except queue.Empty:
                self.proc.kill()
                raise PeerFailure(f"timeout after {timeout:.0f} s")
            if line is None:
                rc = self.proc.wait()
                self.log.flush()
                with open(self.log_path) as f:
                    tail = f.read()[-2000:]
                oom = rc in (-9, 137) or any(w in tail.lower() for w in ("alloc", "out of memory"))
                raise PeerFailure(("out of memory" if oom else "crashed") + f" (exit {rc}): " +
                                  (tail.strip().splitlines() or [""])[-1][:300])
            if line.startswith("{"):
                return json.loads(line)

    def measure(self, runs, timeout):
        try:
            self.proc.stdin.write(f"run {runs}\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it died: _read says how
        data = self._read(timeout)
        return {"ms": statistics.median(data["prefill_ms"]), "rss": data["peak_rss_bytes"]}

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def time_tmc(model, length, threads, runs, timeout):
    rss_path = os.path.join(model.dir, "time-rss.txt")
    cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_path] + model.tmc_cmd(length) + \
        ["--bench", "--bench-runs", str(runs), "--json", "--threads", str(threads)]
    data = bench.last_json(bench.run(cmd, env=bench.peer_env(threads), timeout=timeout))
    with open(rss_path) as f:
        rss_kib = int(f.read().split()[-1])
    return {"ms": data["prefill_ms"], "rss": rss_kib * 1024, "own_peak_rss": data["peak_rss_bytes"],
            "arena_bytes": data.get("arena_bytes")}


def machine_state(build_dir, threads, when):
    """The FMA peak and where the vCPUs sit (a cache line's round trip between
    the first two CPUs: one core's threads, one CCD or two) at `when`: a VM
    moves its vCPUs, and tmc's 2-thread prefills move with them (the same
    4096-token decoder prefill took 112-125 ms at a 110-210 ns round trip
    and 134 ms in a run begun at 586 ns, AMD EPYC Zen 5, 2026-11-30)."""
    counts = sorted({1, threads})
    gflops, round_trip = bench.fma_peak_probe(build_dir, counts)
    bench.log(f"   machine {when}: FMA peak " +
              ", ".join(f"{gflops[t]:.0f} GFLOP/s at {t} thread{'s' if t > 1 else ''}" for t in counts) +
              (f", core round trip {round_trip} ns" if round_trip is not None else ""))
    return {"when": when, "fma_peak_gflops": {str(t): gflops[t] for t in counts},
            "core_round_trip_ns": round_trip}


def measure_point(model, length, args, rng):
    """Every engine at one (model, T): a list of point records."""
    rounds, runs = schedule(length, args)
    status, samples, peaks, extra = {}, {e: [] for e in ["tmc"] + model.peers}, {}, {}
    estimates = {e: lcp.attention_bytes(model.config, length, e) for e in model.peers}
    live = []
    for engine in model.peers:
        if estimates[engine] > args.mem_limit_gib * GIB:
            status[engine] = f"skipped: would need ~{estimates[engine] / GIB:.1f} GiB"
        else:
            live.append(engine)
    # Side by side when they fit together (with room for tmc), else one peer at a time.
    together = sum(estimates[e] for e in live) <= (args.mem_limit_gib - 4) * GIB
    groups = [live] if together or not live else [[e] for e in live]
    for group in groups:
        procs = {}
        for engine in group:
            try:
                procs[engine] = PeerProc(model.peer_cmd(engine, length, args.threads),
                                         os.path.join(model.dir, f"{engine}-{length}.log"),
                                         args.threads, args.timeout, engine)
            except PeerFailure as failure:
                status[engine] = str(failure)
        for r in range(rounds):
            order = ["tmc"] + list(procs)
            rng.shuffle(order)
            for engine in order:
                try:
                    if engine == "tmc":
                        result = time_tmc(model, length, args.threads, runs, args.timeout)
                        extra = {k: result[k] for k in ("own_peak_rss", "arena_bytes")}
                    else:
                        result = procs[engine].measure(runs, args.timeout)
                except PeerFailure as failure:
                    status[engine] = str(failure)
                    procs.pop(engine).close()
                    continue
                except (RuntimeError, subprocess.TimeoutExpired) as error:
                    status["tmc"] = "error: " + str(error).strip().splitlines()[-1][:300]
                    bench.log(f"   tmc failed at T={length}: {error}")
                    continue
                samples[engine].append(result["ms"])
                peaks[engine] = max(peaks.get(engine, 0), result["rss"])
        for proc in procs.values():
            proc.close()
    points = []
    for engine in ["tmc"] + model.peers:
        point = {"engine": engine, "model": model.name, "T": length, "rounds": len(samples[engine]),
                 "runs_per_round": runs, "status": status.get(engine, "ok")}
        if samples[engine]:
            point.update(median_ms=statistics.median(samples[engine]), rounds_ms=samples[engine],
                         spread_ms=[min(samples[engine]), max(samples[engine])],
                         peak_rss_mib=peaks[engine] / 2 ** 20)
            if point["status"] != "ok":
                point["status"] = "partial: " + point["status"]
        if engine != "tmc":
            point["estimated_attention_gib"] = estimates[engine] / GIB
        else:
            point.update(extra)
        points.append(point)
    bench.log(f"   {model.name} T={length}: " + ", ".join(
        f"{NAMES[p['engine']]} " + (f"{p['median_ms']:.1f} ms {p['peak_rss_mib']:.0f} MiB"
                                    if "median_ms" in p else "") +
        ("" if p["status"] == "ok" else f" [{p['status']}]") for p in points))
    return points


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(bench.REPO, "build"))
    parser.add_argument("--work", default=None, help="artifacts (default: BUILD/bench-long-context)")
    parser.add_argument("--results", default=os.path.join(bench.REPO, "bench", "results"))
    parser.add_argument("--lengths", default="512,1024,2048,4096,8192,16384")
    parser.add_argument("--models", default="decoder,longformer,bigbird")
    parser.add_argument("--peers", default="torch,ort", help="'none' times tmc alone")
    parser.add_argument("--rounds", type=int, default=None, help="rounds at every T (default: by T)")
    parser.add_argument("--runs", type=int, default=None, help="runs per round (default: by T)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--check-lengths", default="512,4096")
    parser.add_argument("--reference-max", type=int, default=1024,
                        help="compare with tests/parity's float64 model up to this T")
    parser.add_argument("--mem-limit-gib", type=float, default=20.0,
                        help="skip a peer whose estimated peak exceeds this (default 20: ONNX "
                             "Runtime's 18.5 GiB at 16k fits this 24 GiB machine)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per measurement")
    args = parser.parse_args()
    tmc = os.path.join(args.build_dir, "bin", "tmc")
    work = args.work or os.path.join(args.build_dir, "bench-long-context")
    lengths = [int(t) for t in args.lengths.split(",")]
    peers = [] if args.peers == "none" else args.peers.split(",")
    if "openblas" not in bench.torch_blas() and "torch" in peers:
        bench.log(f"warning: torch's BLAS is {bench.torch_blas()}, not OpenBLAS (bench/run.sh installs it)")
    if "torch" in peers:
        bench.openblas_coretype()
    start, load_before = time.monotonic(), bench.loadavg()
    models = []
    for name in args.models.split(","):
        if name not in lcp.SPECS:
            sys.exit(f"--models: unknown model '{name}' (one of {', '.join(lcp.SPECS)})")
        model = LCModel(name, work, tmc, peers)
        if max(lengths) > model.config["max_seq"]:
            sys.exit(f"--lengths: {max(lengths)} exceeds max_seq {model.config['max_seq']}")
        model.prepare()
        model.parity = {}
        if peers:
            for length in [int(t) for t in args.check_lengths.split(",") if t]:
                model.parity[str(length)] = check_outputs(model, length, args.threads, args.reference_max)
        models.append(model)
    rng = random.Random(bench.SEED)
    points, states = [], []
    bench.build_fma_peak(args.build_dir)
    for model in models:
        states.append(machine_state(args.build_dir, args.threads, f"before {model.name}"))
        for length in lengths:
            points += measure_point(model, length, args, rng)
    states.append(machine_state(args.build_dir, args.threads, "after"))
    fits = {}
    for (engine, model), pts in lines_of(points).items():
        fits[f"{engine}/{model}"] = {"time": fit(pts, "median_ms"), "rss": fit(pts, "peak_rss_mib")}
    doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": bench.machine(),
           "versions": bench.versions(peers), "loadavg_before": load_before,
           "loadavg_after": bench.loadavg(), "wall_s": time.monotonic() - start,
           "settings": {"threads": args.threads, "lengths": lengths, "seed": bench.SEED,
                        "schedule": {str(t): schedule(t, args) for t in lengths},
                        "mem_limit_gib": args.mem_limit_gib, "timeout_s": args.timeout,
                        "parity_tolerance": bench.PARITY_TOLERANCE,
                        "peer_env": {k: v for k, v in bench.peer_env(args.threads, "torch").items()
                                     if k.startswith(("OMP_", "OPENBLAS_", "LD_PRELOAD", "MALLOC_CONF"))},
                        "openblas_coretype_gflops": bench.coretype_trials()},
           "models": {m.name: {"spec": lcp.SPECS[m.name],
                               "mask": describe_mask(lcp.stack_of(m.config)[0]["layer_specs"][0]["mask"]),
                               "parameters": m.check.get("parameters"), "compile_s": m.compile_s,
                               "executable_bytes": os.path.getsize(m.exe), "parity": m.parity}
                      for m in models},
           "machine_state": states, "points": points, "fits": fits}
    doc["targets"] = targets(points)
    os.makedirs(args.results, exist_ok=True)
    stem = os.path.join(args.results, f"long-context-{time.strftime('%Y-%m-%d-%H%M')}")
    with open(stem + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    with open(stem + ".svg", "w") as f:
        f.write(svg_plot(doc))
    print(f"\nLong context, {args.threads} threads ({stem}.json, .svg; {doc['wall_s'] / 60:.1f} min)")
    print(markdown(doc))


if __name__ == "__main__":
    main()
