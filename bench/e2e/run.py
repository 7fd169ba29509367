"""bench/e2e/run.py - tmc against PyTorch, ONNX Runtime and llama.cpp, end to end, in one run.

usage: bench/e2e/run.py [--build-dir build] [--work DIR] [--results DIR] [--rounds R] [--runs K]
                        [--threads 1,2] [--models gpt2,bert,transformer] [--peers torch,ort,llama]
                        [--custom NAME:SPEC:TOKENS[:SOURCE]] [--readme README.md]

For every model: compiles the spec with tmc (timed; executable size), writes
seeded weights (tmc init-weights), exports the same weights to ONNX (from the
PyTorch module of bench/e2e/torch_model.py) and, for GPT-2, to GGUF; checks
that every peer's output matches tmc's before timing anything; then runs R
rounds per thread count, each visiting every model and engine (engines in a
shuffled order); each measurement times K runs after a warm-up run. Peers
serve from one process per engine, model and thread count (loaded once);
tmc's executable runs as a user runs it, one process per measurement.
A figure is the median over rounds of each round's median; the spread is the
rounds' range. Finally a per-kernel profile of tmc's runs (TMR_PROFILE).
Writes RESULTS/latest.json, latest.md and latest.svg (bench/e2e/report.py).
"""
import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PEERS = os.path.join(REPO, "bench", "peers")
sys.path.insert(0, HERE)
import report  # noqa: E402

# name: (spec, prompt tokens, source tokens, peers that can run it)
MODELS = {
    "gpt2": ("examples/gpt2-small.tm", 128, 0, ["torch", "ort", "llama"]),
    "bert": ("examples/bert-base.tm", 128, 0, ["torch", "ort"]),
    "transformer": ("examples/transformer-base.tm", 1, 64, ["torch", "ort"]),
}
SEED = 1
# max |peer - tmc| / max |tmc|: torch and ONNX Runtime agree to ~1e-6, llama.cpp
# (its own gelu and accumulation order) to ~1e-4.
PARITY_TOLERANCE = 1e-3
# Decoding is timed over consecutive steps after the prompt, as llama-bench's
# "tg" measures generation (tmc and llama.cpp; PyTorch's and ONNX Runtime's
# runners time one step on caches of the prompt's length, which costs the
# same every time).
DECODE_STEPS = 32


def log(message):
    print(message, flush=True)


def run(cmd, env=None, capture=True, timeout=1800):
    result = subprocess.run(cmd, env=env, capture_output=capture, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} ... failed ({result.returncode}):\n"
                           f"{(result.stderr or '')[-3000:]}{(result.stdout or '')[-1000:]}")
    return result.stdout


def last_json(text):
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"no JSON result in:\n{text[-2000:]}")


BLAS_DIR = None  # --blas-dir: OpenBLAS's libblas.so.3 for torch when the system's is another


def torch_blas():
    """The BLAS library torch's GEMMs go to: Debian torch links libblas.so.3,
    which is the (very slow) reference BLAS unless OpenBLAS provides it."""
    if BLAS_DIR:
        return os.path.realpath(os.path.join(BLAS_DIR, "libblas.so.3"))
    return os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")


# jemalloc for PyTorch (Debian's libjemalloc2; bench/run.sh installs it).
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"


def peer_env(threads, engine=None):
    """Each peer at its best: the pitfalls of shared/design/PERFORMANCE.md.

    PyTorch (`engine="torch"`) also allocates through jemalloc, keeping the
    memory it frees (no decay): eager torch makes every intermediate a new
    tensor, and glibc maps each one over 32 MB fresh from the kernel, whose
    page faults cost ~2 ns a byte on this VM: a softmax over [4, 4096, 4096]
    scores took 540 ms, 26 ms with freed memory reused (AMD EPYC Zen 5,
    2026-11-30; a 64 MB clone 582 -> 7.6 ms). ONNX Runtime has its own arena,
    tmc plans one."""
    env = dict(os.environ)
    if engine == "torch" and os.path.exists(JEMALLOC):
        env["LD_PRELOAD"] = JEMALLOC + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
        env["MALLOC_CONF"] = "dirty_decay_ms:-1,muzzy_decay_ms:-1"
    if BLAS_DIR:
        env["LD_LIBRARY_PATH"] = BLAS_DIR + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["OMP_NUM_THREADS"] = str(threads)
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    env["OMP_WAIT_POLICY"] = "PASSIVE"  # Debian torch at 2 threads runs 2-9x slower without
    # node's libuv pool (node-llama-cpp's and onnxruntime-node's calls run on
    # it) at one thread: with its default 4 on 2 vCPUs, llama.cpp's decoding
    # steps at 2 threads were bimodal (GPT-2 small, Intel Xeon, 2026-11-27:
    # steps p10 23.0 / p50 25.2 / p90 49.7 ms, a quarter of them over 1.5x the
    # median; with 1: 22.6 / 23.5 / 24.9, none), ONNX Runtime's the same.
    env["UV_THREADPOOL_SIZE"] = "1"
    if _CORETYPE.get("choice"):  # measured: a script with a torch peer calls openblas_coretype()
        env["OPENBLAS_CORETYPE"] = _CORETYPE["choice"]
    elif "OPENBLAS_CORETYPE" not in env and cpu_has("avx512f"):
        env["OPENBLAS_CORETYPE"] = "SkylakeX"  # Debian OpenBLAS detects "Prescott", 5x slower
    return env


def cpu_has(flag):
    """Whether /proc/cpuinfo lists `flag` (read once)."""
    if "flags" not in _CPU:
        with open("/proc/cpuinfo") as f:
            _CPU["flags"] = set(f.read().split())
    return flag in _CPU["flags"]


_CPU = {}
_CORETYPE = {}


def openblas_coretype():
    """The OpenBLAS core type torch's GEMMs run fastest with here, measured.

    Debian's OpenBLAS (0.3.21) knows no Zen 5 and detects "Prescott" on some
    VMs (5x slower); an OPENBLAS_CORETYPE inherited from the environment is
    only one candidate: this machine's sessions set Haswell, whose AVX2 kernels
    ran torch.mm at 107 GFLOP/s a thread on the Zen 5 against SkylakeX's
    201 (2026-11-30: `make bench`'s PyTorch rows of 16:53 were at half their
    best). Each candidate's sgemm (torch_runner.py --sgemm, 1 thread) is
    timed once per process and the fastest kept, which peer_env() then sets;
    `coretype_trials()` has the figures for the results file."""
    if "choice" not in _CORETYPE:
        if not os.path.exists(JEMALLOC):
            log(f"warning: no {JEMALLOC}: PyTorch allocates through glibc, far below its best at "
                "long T (bench/run.sh installs libjemalloc2)")
        candidates = [os.environ.get("OPENBLAS_CORETYPE")]
        if cpu_has("avx512f"):
            candidates += ["SkylakeX", "Cooperlake"]
        if cpu_has("avx2"):
            candidates.append("Haswell")
        candidates = list(dict.fromkeys(c for c in candidates if c))
        trials = {}
        for coretype in candidates:
            try:
                out = run([sys.executable, os.path.join(HERE, "torch_runner.py"), "--sgemm",
                           "--threads", "1"], env=dict(peer_env(1), OPENBLAS_CORETYPE=coretype))
                trials[coretype] = round(last_json(out)["sgemm_gflops"], 1)
            except (RuntimeError, ValueError, KeyError):
                trials[coretype] = None  # a core type this OpenBLAS lacks
        timed = {c: g for c, g in trials.items() if g is not None}
        _CORETYPE["choice"] = max(timed, key=timed.get) if timed else None
        _CORETYPE["trials"] = trials
        if trials:
            log("   OpenBLAS core type for torch: " + ", ".join(
                f"{c} {g if g is not None else 'failed'}" for c, g in trials.items()) +
                f" GFLOP/s (torch.mm, 1 thread): {_CORETYPE['choice']}")
    return _CORETYPE["choice"]


def coretype_trials():
    """openblas_coretype()'s measurements, {core type: GFLOP/s}; empty if it did not run."""
    return _CORETYPE.get("trials", {})


def ids_text(ids):
    return ",".join(str(int(t)) for t in ids)


class Model:
    """One benchmarked model: its artifacts and inputs."""

    def __init__(self, name, spec, tokens, source, peers, work, tmc):
        self.name, self.spec, self.peers = name, os.path.join(REPO, spec), peers
        self.dir = os.path.join(work, name)
        os.makedirs(self.dir, exist_ok=True)
        self.tmc = tmc
        self.check_path = os.path.join(self.dir, "check.json")
        with open(self.check_path, "w") as f:
            f.write(run([tmc, "check", self.spec, "--json"]))
        with open(self.check_path) as f:
            self.check = json.load(f)
        vocab = self.check["vocab"]
        rng = np.random.default_rng(SEED)
        self.tokens = rng.integers(0, vocab, tokens)
        self.source = rng.integers(0, vocab, source) if source else None
        self.lm = self.check["output"].startswith("lm_head")
        self.decoder_only = self.lm and "encoder" not in self.check
        # As many consecutive steps as max_seq leaves room for, up to DECODE_STEPS.
        self.decode_steps = max(1, min(DECODE_STEPS, self.check["max_seq"] - tokens))
        self.exe = os.path.join(self.dir, name)
        self.weights = os.path.join(self.dir, "weights.safetensors")

    def prepare(self):
        log(f"== {self.name}: tmc compile {os.path.relpath(self.spec, REPO)}")
        # Wall time, and CPU time (user + system of tmc and what it runs), which
        # other sessions' load on a shared machine does not inflate.
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        run([self.tmc, "compile", self.spec, "-o", self.exe])
        self.compile_s = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.compile_cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        self.exe_bytes = os.path.getsize(self.exe)
        log(f"   {self.compile_s:.1f} s ({self.compile_cpu_s:.1f} s CPU), "
            f"executable {self.exe_bytes / 1e6:.2f} MB")
        if not os.path.exists(self.weights):
            run([self.tmc, "init-weights", self.spec, "-o", self.weights, "--seed", str(SEED)])

    def tmc_args(self, tokens, exe=None):
        """A run of the model's executable, or of `exe` (another precision's)."""
        args = [exe or self.exe, "--weights", self.weights, "--tokens", ids_text(tokens)]
        if self.source is not None:
            args += ["--source-tokens", ids_text(self.source)]
        return args

    def tmc_output(self, tokens, tag, exe=None):
        path = os.path.join(self.dir, f"tmc-{tag}.npy")
        run(self.tmc_args(tokens, exe) + ["--output", path])
        return np.load(path)[0]


def script_arguments(doc, work, runs, extra=()):
    """The arguments bench/e2e's one-run scripts share (precision.py,
    long_decode.py, onnx_peer.py), plus `extra` (name, type, default)
    triples; returns the parsed arguments and the tmc binary, the work
    directory (BUILD/`work` unless --work) and the thread counts."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    parser.add_argument("--work", default=None)
    parser.add_argument("--results", default=os.path.join(REPO, "bench", "results"))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=runs)
    for name, kind, default in extra:
        parser.add_argument(name, type=kind, default=default)
    args = parser.parse_args()
    return (args, os.path.join(args.build_dir, "bin", "tmc"),
            args.work or os.path.join(args.build_dir, work),
            [int(t) for t in args.threads.split(",")])


def build_c_harness(tmc, model, max_batch, source, lib_name, flags=()):
    """`model`'s spec as a library (DIR/libmodel.a, DIR/model.h; DIR = its directory's
    `lib_name`, compiled with --max-batch and `flags`) and bench/e2e/`source` (a C harness
    over tmr.h's batches) linked to it; returns the harness executable."""
    lib_dir = os.path.join(model.dir, lib_name)
    os.makedirs(lib_dir, exist_ok=True)
    log(f"   tmc compile --emit=lib --max-batch {max_batch} {' '.join(flags)}; building {source}")
    run([tmc, "compile", model.spec, "--emit=lib", "--max-batch", str(max_batch), *flags,
         "-o", os.path.join(lib_dir, "model")])
    exe = os.path.join(lib_dir, os.path.splitext(source)[0])
    run(["cc", "-std=c99", "-O2", os.path.join(HERE, source), "-I" + lib_dir,
         os.path.join(lib_dir, "libmodel.a"), "-lstdc++", "-lm", "-lpthread", "-ldl", "-o", exe])
    return exe


def targets_markdown(targets):
    """A script's targets ({target, limit, measured, met}) as markdown table lines: measured as
    a ratio ("1.43x"), a yes/no, or "-"; met yes, no or n/a."""
    lines = ["| target | limit | measured | met |", "|---|---|---|---|"]
    for t in targets:
        measured = t["measured"]
        text = "-" if measured is None else str(measured) if isinstance(measured, bool) \
            else f"{measured:.2f}x"
        met = "n/a" if t["met"] is None else "yes" if t["met"] else "no"
        lines.append(f"| {t['target']} | {t['limit']} | {text} | {met} |")
    return lines


def relative_error(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))


def check_parity(model, peers):
    """Every peer's output against tmc's on the benchmark inputs; raises on a mismatch."""
    import torch
    import torch_model
    out = {}
    reference = model.tmc_output(model.tokens, "prompt")
    step_reference = None
    if model.decoder_only:
        # tmc's cached decoding step equals full recomputation (tests/e2e); the
        # 129-token prompt's last row is the decoding step's reference.
        step_reference = model.tmc_output(np.append(model.tokens, model.tokens[0]), "step")[-1]
    tokens = torch.from_numpy(model.tokens.astype(np.int64))
    source = torch.from_numpy(model.source.astype(np.int64)) if model.source is not None else None
    torch_net = torch_model.build(model.check_path, model.weights)
    with torch.inference_mode():
        result = {"prompt": relative_error(torch_net(tokens, source).numpy(), reference)}
        if model.decoder_only:
            _, past = torch_net.prefill(tokens)
            logits, _ = torch_net.step(tokens[:1], past)
            result["step"] = relative_error(logits.numpy()[-1], step_reference)
            if "ort" in peers:  # ONNX Runtime's decoding step reads the same caches
                for index, name in ((0, "past_k"), (1, "past_v")):
                    np.stack([kv[index] for kv in past]).astype("<f4").tofile(
                        os.path.join(model.dir, "onnx", f"{name}.f32"))
    out["torch"] = result
    torch_net = past = None  # the driver stays small while the engines run
    if "ort" in peers:
        check = os.path.join(model.dir, "ort-check")
        cmd = ["node", os.path.join(PEERS, "ort_runner.mjs"), "--dir", os.path.join(model.dir, "onnx"),
               "--tokens", ids_text(model.tokens), "--threads", "2", "--check", check]
        if model.source is not None:
            cmd += ["--source", ids_text(model.source)]
        run(cmd)
        prompt = np.fromfile(check + ".prefill.f32", "<f4").reshape(reference.shape)
        result = {"prompt": relative_error(prompt, reference)}
        if model.decoder_only:
            result["step"] = relative_error(np.fromfile(check + ".decode.f32", "<f4"), step_reference)
        out["ort"] = result
    if "llama" in peers:
        check = os.path.join(model.dir, "llama-check.json")
        run(["node", os.path.join(PEERS, "llama_runner.mjs"), "--model", os.path.join(model.dir, "model.gguf"),
             "--tokens", ids_text(model.tokens), "--threads", "2", "--check", check])
        with open(check) as f:
            data = json.load(f)
        vocab = model.check["vocab"]
        result = {}
        for key, row in (("prompt", reference[-1]), ("step", step_reference)):
            # llama.cpp computes the next token's logits only (the prompt's last row).
            values = data[key] + [None] * (vocab - len(data[key]))
            if any(v is None for v in values):
                raise RuntimeError(f"{model.name}: llama.cpp returned {sum(v is not None for v in values)} "
                                   f"of {vocab} logits")
            result[key] = relative_error(np.array(values, np.float64), row)
        out["llama"] = result
    for peer, result in out.items():
        log(f"   parity {peer} (max |peer - tmc| / max |tmc|): " +
            ", ".join(f"{k} {v:.2e}" for k, v in result.items()))
        if not max(result.values()) <= PARITY_TOLERANCE:
            raise RuntimeError(f"{model.name}: {peer}'s output differs from tmc's ({result}); "
                               "not timing unequal work")
    return out


def export_peers(model, peers):
    # The marker names what the graphs are: a work dir exported before the
    # standard prompt graph existed is exported again.
    exported = os.path.join(model.dir, "onnx", "exported-standard-prefill")
    if "ort" in peers and not os.path.exists(exported):
        log(f"   exporting ONNX (torch.onnx, opset 14)")
        cmd = [sys.executable, os.path.join(HERE, "export_onnx.py"), model.check_path, model.weights,
               os.path.join(model.dir, "onnx"), "--tokens", str(len(model.tokens))]
        if model.source is not None:
            cmd += ["--source", str(len(model.source))]
        if model.decoder_only:
            cmd += ["--past", str(len(model.tokens))]
        run(cmd)
        # The prompt graph as users export it (batch dimension, the model's
        # own fused projections) where standard_model.py has the model's form
        # (GPT-2, BERT); onnx_peer.py times it against the other forms
        # (bench/results/onnx-peer-*.json). Otherwise the rows form stays.
        import standard_model
        try:
            standard_model.export(model.check_path, model.weights,
                                  os.path.join(model.dir, "onnx", "prefill.onnx"), "standard",
                                  model.tokens.tolist())
            log("   the prompt graph in the standard form (standard_model.py)")
        except NotImplementedError:
            pass
        open(exported, "w").close()
    if "llama" in peers and not os.path.exists(os.path.join(model.dir, "model.gguf")):
        log(f"   writing GGUF (llama.cpp gpt2)")
        import gguf_writer
        import torch_model
        gguf_writer.write_gpt2(os.path.join(model.dir, "model.gguf"), model.check,
                               torch_model.load_safetensors(model.weights),
                               os.path.join(REPO, "examples", "tokenizers", "gpt2"))


def time_tmc(model, threads, runs):
    """One tmc process (load, pack, a warm-up run, then `runs` timed runs): its medians."""
    cmd = model.tmc_args(model.tokens) + ["--bench", "--bench-runs", str(runs), "--json",
                                          "--threads", str(threads)]
    if model.decoder_only:
        cmd += ["--max-new", str(model.decode_steps)]
    data = last_json(run(cmd, env=peer_env(threads)))
    # prefill_last_row_ms: the prompt as generation runs it, the LM head on
    # the last row only (as llama.cpp computes a prompt).
    return {"prefill_ms": data["prefill_ms"], "decode_ms": data.get("decode_ms") or None,
            "decode_p10_ms": data.get("decode_p10_ms"), "decode_p90_ms": data.get("decode_p90_ms"),
            "prefill_last_row_ms": data.get("prefill_last_row_ms"),
            "peak_rss_bytes": data["peak_rss_bytes"]}


class Peer:
    """A peer's process, serving measurements: it loads the model once and
    answers each "run K" with K timed runs after a warm-up run."""

    def __init__(self, model, engine, threads, phase=None):
        common = ["--tokens", ids_text(model.tokens), "--threads", str(threads)]
        source = ["--source", ids_text(model.source)] if model.source is not None else []
        if engine == "torch":
            cmd = [sys.executable, os.path.join(HERE, "torch_runner.py"), "--check", model.check_path,
                   "--weights", model.weights] + common + source + (["--decode"] if model.decoder_only else [])
        elif engine == "ort":
            cmd = ["node", os.path.join(PEERS, "ort_runner.mjs"), "--dir", os.path.join(model.dir, "onnx")] + \
                common + source + (["--phase", phase] if phase else [])
        else:
            # Steps 2..N of each run: llama.cpp's first step after a prompt
            # rebuilds its graph.
            cmd = ["node", os.path.join(PEERS, "llama_runner.mjs"), "--model",
                   os.path.join(model.dir, "model.gguf"), "--steps", str(model.decode_steps)] + common
        part = f"-{phase}" if phase else ""
        self._start(cmd + ["--serve"], f"{engine}{part} ({model.name}, {threads} threads)",
                    os.path.join(model.dir, f"{engine}{part}-{threads}t.log"), threads, engine)

    def _start(self, cmd, name, log_path, threads, engine=None):
        """Starts the serving process `cmd` (its stderr to log_path) and waits
        until it has loaded the model."""
        self.name, self.log_path = name, log_path
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, text=True, env=peer_env(threads, engine))
        self._read()  # {"ready": true} once loaded

    def _read(self):
        while True:
            line = self.proc.stdout.readline()
            if not line:
                self.proc.wait()
                with open(self.log_path) as f:
                    raise RuntimeError(f"{self.name} exited ({self.proc.returncode}):\n{f.read()[-3000:]}")
            if line.startswith("{"):
                return json.loads(line)

    def measure(self, runs):
        self.proc.stdin.write(f"run {runs}\n")
        self.proc.stdin.flush()
        data = self._read()
        steps = data.get("decode_ms") or []
        p10, p90 = deciles(steps) if steps else (None, None)
        return {"prefill_ms": statistics.median(data["prefill_ms"]) if data["prefill_ms"] else None,
                "decode_ms": statistics.median(steps) if steps else None,
                "decode_p10_ms": p10, "decode_p90_ms": p90,
                "peak_rss_bytes": data["peak_rss_bytes"]}

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


class OrtPeers:
    """ONNX Runtime's prompt graph and decoding-step graph, each in a process
    of its own: a session keeps a pool of intra-op threads that spin after a
    run, and with two sessions in one process on 2 vCPUs the idle pool slowed
    the other's prompt by ~25% (GPT-2 small, 2 threads: 125 against 97 ms)."""

    def __init__(self, model, threads):
        phases = ["prefill", "decode"] if model.decoder_only else ["prefill"]
        self.parts = []
        for phase in phases:
            self.parts.append(Peer(model, "ort", threads, phase if len(phases) > 1 else None))

    def measure(self, runs):
        results = [part.measure(runs) for part in self.parts]
        merged = dict(results[0])
        if len(results) > 1:
            merged["decode_ms"] = results[1]["decode_ms"]
            # What one process holding both graphs would hold.
            merged["peak_rss_bytes"] = sum(r["peak_rss_bytes"] for r in results)
        return merged

    def close(self):
        for part in self.parts:
            part.close()


def build_fma_peak(build_dir):
    """Builds bench_fma_peak in `build_dir` (a no-op when it is current)."""
    subprocess.run(["ninja", "-C", build_dir, "bench_fma_peak"], check=True,
                   stdout=subprocess.DEVNULL)


def fma_peak(build_dir, threads):
    """This machine's f32 FMA peak, GFLOP/s per thread count, measured now
    (bench_fma_peak: compiler/tune/FmaPeak.cpp, as `tmc tune` measures it):
    the compute limit every rate is read against."""
    return fma_peak_probe(build_dir, threads)[0]


def fma_peak_probe(build_dir, threads):
    """fma_peak's figures, and a cache line's round trip between the first
    two CPUs in ns (None with one CPU): on a VM it says where the vCPUs sit
    at the moment (one core's two threads, one CCD or two), which moves
    2-thread times (bench/kernels/FmaPeakMain.cpp)."""
    args = [os.path.join(build_dir, "bin", "bench_fma_peak")]
    for t in threads:
        args += ["--threads", str(t)]
    out = last_json(run(args))
    return {int(k): v for k, v in out["gflops"].items()}, out.get("core_round_trip_ns")


def deciles(values):
    """The 10th and 90th percentiles of `values`, linear between the nearest
    ranks (statistics' "inclusive" method, as runtime/bench.cpp computes tmc's)."""
    if len(values) < 2:
        return values[0], values[0]
    cuts = statistics.quantiles(values, n=10, method="inclusive")
    return cuts[0], cuts[-1]


def sgemm_peak(threads):
    out = run([sys.executable, os.path.join(HERE, "torch_runner.py"), "--sgemm", "--threads", str(threads)],
              env=peer_env(threads, "torch"))
    return last_json(out)["sgemm_gflops"]


def profile(model, threads, runs):
    """tmc's time per kernel and call site over --bench's timed runs (TMR_PROFILE).

    With --max-new a run also computes the prompt as generation does (the LM
    head on the last row) beside the full one, and TMR_PROFILE would sum the
    two as one phase: the prompt is profiled without --max-new, the decoding
    step in a process of its own."""
    def sites(extra, phases):
        path = os.path.join(model.dir, f"profile-{threads}t{''.join(extra)}.json")
        cmd = model.tmc_args(model.tokens) + ["--bench", "--bench-runs", str(runs),
                                              "--threads", str(threads)] + extra
        run(cmd, env=dict(os.environ, TMR_PROFILE=path))
        with open(path) as f:
            return [e for e in json.load(f) if e["phase"] in phases]

    entries = sites([], {"prompt", "encode"})
    if model.decoder_only:
        entries += sites(["--max-new", "1"], {"step"})
    return entries


def versions(peers):
    out = {"python": platform.python_version()}
    if not peers:
        return out
    out["torch BLAS"] = "/".join(torch_blas().split("/")[-2:])
    try:
        import torch
        out["torch"] = torch.__version__
    except ImportError:
        pass
    for package in ("onnxruntime-node", "node-llama-cpp"):
        path = os.path.join(PEERS, "node_modules", package, "package.json")
        if os.path.exists(path):
            with open(path) as f:
                out[package] = json.load(f)["version"]
    meta = os.path.join(PEERS, "node_modules", "@node-llama-cpp", "linux-x64", "bins", "linux-x64",
                        "_nlcBuildMetadata.json")
    if os.path.exists(meta):
        with open(meta) as f:
            out["llama.cpp (CPU build, release)"] = \
                json.load(f).get("buildOptions", {}).get("llamaCpp", {}).get("release")
    return out


def machine():
    """The CPU as /proc/cpuinfo names it, with its family and model: "AMD EPYC" alone
    covers a Zen 4 (family 25) and a Zen 5 (26), whose vector units differ 2x."""
    fields = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "cpu family", "model"):
                fields.setdefault(key.strip(), value.strip())
            if not line.strip():
                break
    model_name = fields.get("model name", "")
    if "cpu family" in fields:
        model_name += f" (family {fields['cpu family']}, model {fields.get('model', '?')})"
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) * 1024
    return {"cpu": model_name, "cores": os.cpu_count(), "memory_bytes": mem,
            "kernel": platform.release()}


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    parser.add_argument("--work", default=None, help="artifacts (default: BUILD/bench-e2e)")
    parser.add_argument("--results", default=os.path.join(REPO, "bench", "results"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--models", default="gpt2,bert,transformer")
    parser.add_argument("--peers", default="torch,ort,llama", help="'none' times tmc alone")
    parser.add_argument("--custom", action="append", default=[],
                        help="NAME:SPEC:TOKENS[:SOURCE] (a model of your own; replaces --models)")
    parser.add_argument("--readme", default=None, help="README.md whose Benchmarks table to update")
    parser.add_argument("--note", default="", help="a line saying how the run was made (e.g. --boost)")
    parser.add_argument("--blas-dir", default=None,
                        help="a directory with OpenBLAS's libblas.so.3, for torch where the system's "
                             "libblas.so.3 is another (e.g. an unpacked libopenblas0-pthread .deb)")
    args = parser.parse_args()
    global BLAS_DIR
    BLAS_DIR = os.path.abspath(args.blas_dir) if args.blas_dir else None
    if not os.path.exists(os.path.join(BLAS_DIR, "libblas.so.3")) if BLAS_DIR else False:
        sys.exit(f"run.py: --blas-dir {BLAS_DIR} has no libblas.so.3")
    if "openblas" not in torch_blas() and args.peers != "none":
        log(f"warning: torch's BLAS is {torch_blas()}, not OpenBLAS: its GEMMs run far below the "
            "machine's speed (install libopenblas0-pthread, or pass --blas-dir)")
    tmc = os.path.join(args.build_dir, "bin", "tmc")
    work = args.work or os.path.join(args.build_dir, "bench-e2e")
    threads = [int(t) for t in args.threads.split(",")]
    wanted_peers = [] if args.peers == "none" else args.peers.split(",")
    if "torch" in wanted_peers:
        openblas_coretype()
    specs = {}
    for custom in args.custom:
        parts = custom.split(":")
        specs[parts[0]] = (parts[1], int(parts[2]), int(parts[3]) if len(parts) > 3 else 0,
                           ["torch", "ort", "llama"])
    if not specs:
        specs = {name: MODELS[name] for name in args.models.split(",")}

    load_before = loadavg()
    models = []
    for name, (spec, tokens, source, peers) in specs.items():
        model = Model(name, spec, tokens, source, [p for p in peers if p in wanted_peers], work, tmc)
        if "llama" in model.peers and not model.decoder_only:
            model.peers.remove("llama")
        model.prepare()
        if model.peers:
            export_peers(model, model.peers)
            model.parity = check_parity(model, model.peers)
        else:
            model.parity = {}
        models.append(model)

    build_fma_peak(args.build_dir)
    peak = {t: 0.0 for t in threads}
    fma = {t: 0.0 for t in threads}
    samples = {}  # (model, threads, engine) -> list of per-round results
    log(f"== timing: {args.rounds} rounds x {args.runs} runs (load {load_before})")
    rng = random.Random(SEED)
    round_trips = {}  # where the vCPUs sat at each round (fma_peak_probe)
    for t in threads:
        # The peers' processes for this thread count, each loaded once.
        peers = {}
        try:
            for model in models:
                for engine in model.peers:
                    peers[(model.name, engine)] = OrtPeers(model, t) if engine == "ort" else \
                        Peer(model, engine, t)
            for r in range(args.rounds):
                # The best of the rounds: a VM's clock and neighbours only lower it.
                gflops, round_trip = fma_peak_probe(args.build_dir, [t])
                fma[t] = max(fma[t], gflops[t])
                round_trips.setdefault(t, []).append(round_trip)
                if wanted_peers:
                    peak[t] = max(peak[t], sgemm_peak(t))
                for model in models:
                    engines = ["tmc"] + model.peers
                    rng.shuffle(engines)
                    for engine in engines:
                        result = time_tmc(model, t, args.runs) if engine == "tmc" else \
                            peers[(model.name, engine)].measure(args.runs)
                        samples.setdefault((model.name, t, engine), []).append(result)
                log(f"   {t} thread(s): round {r + 1}/{args.rounds} done (load {loadavg()})")
        finally:
            for peer in peers.values():
                peer.close()
    profiles = {}
    for model in models:
        profiles[model.name] = {str(t): profile(model, t, args.runs) for t in threads}
    load_after = loadavg()

    results = report.summarize(models, samples, threads, peak, fma)
    doc = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "loadavg_before": load_before,
        "loadavg_after": load_after,
        "note": args.note,
        "versions": versions(wanted_peers),
        "settings": {"rounds": args.rounds, "runs_per_round": args.runs, "threads": threads,
                     "seed": SEED, "peer_env": {k: v for k, v in peer_env(1, "torch").items()
                                                if k.startswith(("OMP_WAIT", "OPENBLAS_CORE", "UV_",
                                                                 "LD_PRELOAD", "MALLOC_CONF"))},
                     "openblas_coretype_gflops": coretype_trials()},
        "sgemm_peak_gflops": {str(t): peak[t] for t in threads},
        "fma_peak_gflops": {str(t): fma[t] for t in threads},
        "core_round_trip_ns": {str(t): round_trips.get(t, []) for t in threads},
        "models": {m.name: {"spec": os.path.relpath(m.spec, REPO), "tokens": len(m.tokens),
                            "source_tokens": 0 if m.source is None else len(m.source),
                            "compile_s": m.compile_s, "compile_cpu_s": m.compile_cpu_s,
                            "executable_bytes": m.exe_bytes,
                            "parity": m.parity, "peers": m.peers} for m in models},
        "results": results,
        "targets": report.targets(results, {m.name: m for m in models}),
        "profile": report.summarize_profiles(profiles),
    }
    os.makedirs(args.results, exist_ok=True)
    report.write_all(doc, args.results, args.readme)
    log(f"== wrote {os.path.relpath(args.results, os.getcwd())}/latest.{{json,md,svg}}")
    print(report.markdown(doc))


if __name__ == "__main__":
    main()
