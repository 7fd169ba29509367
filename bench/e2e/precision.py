"""bench/e2e/precision.py - tmc's reduced precisions against llama.cpp's, GPT-2 small, one run.

    bench/e2e/precision.py [--build-dir build] [--threads 1,2] [--rounds 3] [--runs 3]
                           [--steps 32] [--results bench/results]

tmc compiles GPT-2 small four times, f32, `--precision bf16`, `--precision int8` and
`--precision q4`; llama.cpp (node-llama-cpp's CPU build) loads the same seeded weights as GGUF
files in f32, f16, bf16, Q8_0 and Q4_0 (every 2-D tensor in that type, as its own tools write
them; Q4_0's values are exactly tmc q4's). Each engine, at each thread count, loaded once:
prefill of 128 tokens (tmc both with every row's logits and as generation runs it, the LM head
on the last row only: llama.cpp's prompt computes the last row's, so the prefill ratios set that
run of tmc against llama.cpp's), then --steps consecutive greedy decoding steps, each timed (as
llama-bench's "tg" measures: steps 2..N, since llama.cpp's first step after a prompt rebuilds
its graph; tmc's --bench reports the median step the same way). Engines are interleaved in a
shuffled order every round; the table gives medians over rounds, and the ratios each of tmc's
rows against each llama.cpp row at the same thread count and each engine at its best thread
count. Before timing, every llama.cpp file's next-token logits are checked against tmc f32's
(max |a - b| / max |b|, bounded by PARITY): a wrong file would time the wrong model. Then each
reduced precision's `tmc quantize` file is measured against the f32 file it came from: bytes on
disk (beside llama.cpp's GGUF of the matching type) and the wall time of a one-token run from
each (start, load, packing; median of 5).

Bandwidth: every round also reads 1 GiB with bench/stream (bench_stream) at each thread count;
each engine's bytes per decoding step (tmc: the packed linear weights a step reads whole, `tmc
check --json`'s run_memory_bytes.packed; llama.cpp: its GGUF file, whose tensors a GPT-2 step
reads all of, the tied token table as the output matrix) divided by its step time is compared
with that read bandwidth, at the same thread count (issue #21's target: >= 80%). The read
bandwidth of a shared virtual machine moves by tens of percent from minute to minute (the Zen 4
of 2026-11-29: 28 to 61 GB/s at two threads within two hours), so each engine's measurement is
also preceded by a stream read of its own, and the `adjacent` fraction is the median over rounds
of each round's rate against the read just before it.

Writes RESULTS/precision-gpt2-DATE-HHMM.json and prints markdown tables.
"""
import json
import os
import random
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as bench  # noqa: E402  (bench/e2e/run.py: Model, Peer, peer_env, ...)

# f16 keeps 11 significant bits, bf16 8: the logits of 12 layers of either
# against f32 differ by ~1e-3 and ~1e-2 of the largest.
# Q8_0 (blocks of 32, 8 bits) lands between them; Q4_0 (4 bits) measured 3.5e-2.
PARITY = {"f32": 1e-3, "f16": 1e-2, "bf16": 5e-2, "q8_0": 5e-2, "q4_0": 1e-1}
LLAMA_TYPES = ["f32", "f16", "bf16", "q8_0", "q4_0"]
TMC_PRECISIONS = ["f32", "bf16", "int8", "q4"]


class LlamaPeer(bench.Peer):
    """llama.cpp on one GGUF file, decoding --steps consecutive tokens a run."""

    def __init__(self, model, gguf, label, threads, steps):
        cmd = ["node", os.path.join(bench.PEERS, "llama_runner.mjs"), "--model", gguf,
               "--tokens", bench.ids_text(model.tokens), "--threads", str(threads),
               "--steps", str(steps), "--serve"]
        self._start(cmd, f"{label} ({threads} threads)",
                    os.path.join(model.dir, f"{label}-{threads}t.log"), threads)


def time_tmc(exe, model, threads, runs, steps):
    cmd = model.tmc_args(model.tokens, exe) + ["--max-new", str(steps), "--bench", "--bench-runs",
                                               str(runs), "--json", "--threads", str(threads)]
    data = bench.last_json(bench.run(cmd, env=bench.peer_env(threads)))
    # prefill_last_row_ms: the prompt as generation runs it, the LM head on the
    # last row only, as llama.cpp computes every prompt.
    return {"prefill_ms": data["prefill_ms"], "decode_ms": data["decode_ms"],
            "prefill_last_row_ms": data["prefill_last_row_ms"],
            "peak_rss_bytes": data["peak_rss_bytes"], "isa": data.get("isa")}


def median_rows(samples):
    """One row per (engine, threads) of `samples` (a list of results per
    round): the medians over rounds, each round's decode step kept."""
    rows = []
    for (label, t), results in sorted(samples.items()):
        row = {"engine": label, "threads": t,
               "prefill_ms": statistics.median(r["prefill_ms"] for r in results),
               "decode_ms": statistics.median(r["decode_ms"] for r in results),
               "decode_ms_rounds": [r["decode_ms"] for r in results]}
        if all("peak_rss_bytes" in r for r in results):
            row["peak_rss_bytes"] = max(r["peak_rss_bytes"] for r in results)
        if all("prefill_last_row_ms" in r for r in results):
            row["prefill_last_row_ms"] = statistics.median(r["prefill_last_row_ms"]
                                                           for r in results)
        rows.append(row)
    return rows


def print_ratios(ratios):
    for name, value in ratios.items():
        print(f"- {name}: {value['ratio']:.2f}x (threads {value['threads'][0]} vs "
              f"{value['threads'][1]})")


def stream_read(stream, threads):
    """Read bandwidth (GB/s, best of 10 passes over 1 GiB) at `threads`."""
    out = bench.run([stream, "--threads", str(threads), "--reps", "10"],
                    env=bench.peer_env(threads))
    return {"read_gb_per_s": bench.last_json(out)["read_gb_per_s"]}


def packed_bytes(tmc, spec, precision):
    """What a tmc decoding step reads of the weights: every linear's packed
    panels (tmc check's run-memory estimate)."""
    out = bench.run([tmc, "check", spec, "--json", "--precision", precision])
    return json.loads(out)["run_memory_bytes"]["packed"]


def start_ms(exe, weights, runs):
    """Wall time of a whole one-token run (start, load and pack, one prompt
    token, exit), the median of `runs`: what a file's format costs at load."""
    times = []
    for _ in range(runs):
        begin = time.perf_counter()
        bench.run([exe, "--weights", weights, "--tokens", "1", "--threads", "2"],
                  env=bench.peer_env(2))
        times.append((time.perf_counter() - begin) * 1e3)
    return statistics.median(times)


def measure_files(tmc, model, exes, ggufs, runs):
    """Per reduced precision: `tmc quantize`'s file against the f32 file it
    came from (bytes, and the start of a one-token run from each; the same
    packed bytes result, so the runs after it are the same), and llama.cpp's
    GGUF of the matching type on disk."""
    files = {}
    for precision, gguf_type in (("bf16", "bf16"), ("int8", "q8_0"), ("q4", "q4_0")):
        quantized = os.path.join(model.dir, f"weights-{precision}.safetensors")
        bench.run([tmc, "quantize", model.spec, "--weights", model.weights, "-o", quantized,
                   "--precision", precision])
        files[precision] = {
            "f32_file_bytes": os.path.getsize(model.weights),
            "quantized_file_bytes": os.path.getsize(quantized),
            "llama_gguf": gguf_type, "llama_gguf_bytes": os.path.getsize(ggufs[gguf_type]),
            "start_ms_f32_file": start_ms(exes[precision], model.weights, runs),
            "start_ms_quantized_file": start_ms(exes[precision], quantized, runs)}
        bench.log(f"   tmc {precision}: quantized file {files[precision]}")
    return files


def check_llama(model, gguf, matrix_type, f32_logits):
    out = os.path.join(model.dir, f"llama-{matrix_type}-check.json")
    bench.run(["node", os.path.join(bench.PEERS, "llama_runner.mjs"), "--model", gguf,
               "--tokens", bench.ids_text(model.tokens), "--threads", "2", "--check", out])
    with open(out) as f:
        prompt = json.load(f)["prompt"]
    got = np.array([np.nan if v is None else v for v in prompt], dtype=np.float64)
    error = float(np.nanmax(np.abs(got - f32_logits)) / np.abs(f32_logits).max())
    if not error <= PARITY[matrix_type]:
        raise RuntimeError(f"llama.cpp {matrix_type}: next-token logits differ from tmc f32's by "
                           f"{error:.2e} (bound {PARITY[matrix_type]})")
    return error


def main():
    args, tmc, work, threads = bench.script_arguments(__doc__, "bench-precision", 3,
                                                      [("--steps", int, 32)])
    stream = os.path.join(args.build_dir, "bin", "bench_stream")
    bench.run(["ninja", "-C", args.build_dir, "bench_stream"])

    spec, tokens, _, _ = bench.MODELS["gpt2"]
    model = bench.Model("gpt2", spec, tokens, 0, ["llama"], work, tmc)
    model.prepare()  # f32 executable and the seeded weights
    exes = {"f32": model.exe}
    for precision in TMC_PRECISIONS[1:]:
        exes[precision] = model.exe + "-" + precision
        bench.run([tmc, "compile", model.spec, "--precision", precision, "-o", exes[precision]])
    f32_logits = model.tmc_output(model.tokens, "f32")[-1].astype(np.float64)
    ggufs, parity = {}, {}
    for matrix_type in LLAMA_TYPES:
        ggufs[matrix_type] = os.path.join(model.dir, f"model-{matrix_type}.gguf")
        if not os.path.exists(ggufs[matrix_type]):
            import gguf_writer
            import torch_model
            gguf_writer.write_gpt2(ggufs[matrix_type], model.check,
                                   torch_model.load_safetensors(model.weights),
                                   os.path.join(bench.REPO, "examples", "tokenizers", "gpt2"),
                                   matrix_type)
        parity[matrix_type] = check_llama(model, ggufs[matrix_type], matrix_type, f32_logits)
        bench.log(f"   llama.cpp {matrix_type}: next-token logits within {parity[matrix_type]:.1e} "
                  "of tmc f32's")

    load_before = bench.loadavg()
    files = measure_files(tmc, model, exes, ggufs, 5)
    samples = {}  # (engine label, threads) -> [result per round]
    rng = random.Random(bench.SEED)
    for t in threads:
        peers = {}
        try:
            for matrix_type in LLAMA_TYPES:
                label = f"llama.cpp {matrix_type}"
                peers[label] = LlamaPeer(model, ggufs[matrix_type], label, t, args.steps)
            labels = [f"tmc {p}" for p in TMC_PRECISIONS] + list(peers) + ["stream read"]
            for r in range(args.rounds):
                rng.shuffle(labels)
                for label in labels:
                    before = None if label == "stream read" else stream_read(stream, t)
                    if label.startswith("tmc "):
                        result = time_tmc(exes[label[4:]], model, t, args.runs, args.steps)
                    elif label == "stream read":
                        result = stream_read(stream, t)
                    else:
                        result = peers[label].measure(args.runs)
                    if before:
                        result["stream_before_gb_per_s"] = before["read_gb_per_s"]
                    samples.setdefault((label, t), []).append(result)
                bench.log(f"   {t} thread(s): round {r + 1}/{args.rounds} (load {bench.loadavg()})")
        finally:
            for peer in peers.values():
                peer.close()

    stream_gbps = {t: statistics.median(r["read_gb_per_s"] for r in results)
                   for (label, t), results in samples.items() if label == "stream read"}
    rows = median_rows({key: results for key, results in samples.items()
                        if key[0] != "stream read"})
    best = {}
    for row in rows:
        for key in ("prefill_ms", "prefill_last_row_ms", "decode_ms"):
            entry = best.setdefault((row["engine"], key), row)
            if key in row and row[key] < entry[key]:
                best[(row["engine"], key)] = row
    ratios = {}
    # llama.cpp's prompt computes the LM head for its last row only: its
    # prefill is set against tmc's prompt run the same way.
    for tmc_label in (f"tmc {p}" for p in TMC_PRECISIONS):
        for llama_label in (f"llama.cpp {m}" for m in LLAMA_TYPES):
            for mine, key, name in (("prefill_last_row_ms", "prefill_ms", "prefill"),
                                    ("decode_ms", "decode_ms", "decode")):
                a, b = best[(tmc_label, mine)], best[(llama_label, key)]
                ratios[f"{tmc_label} / {llama_label}, {name}, each at its best threads"] = {
                    "ratio": a[mine] / b[key], "threads": [a["threads"], b["threads"]]}
    # Bytes per decoding step over the step time, against the read bandwidth
    # measured in the same rounds at the engine's best decoding thread count.
    step_bytes = {f"tmc {p}": packed_bytes(tmc, model.spec, p) for p in TMC_PRECISIONS}
    step_bytes.update({f"llama.cpp {m}": os.path.getsize(ggufs[m]) for m in LLAMA_TYPES})
    bandwidth = {}
    for label, bytes_per_step in step_bytes.items():
        row = best[(label, "decode_ms")]
        gbps = bytes_per_step / (row["decode_ms"] * 1e-3) / 1e9
        # Each round's step rate against the stream read just before it.
        rounds = samples[(label, row["threads"])]
        adjacent = [bytes_per_step / (r["decode_ms"] * 1e-3) / 1e9 / r["stream_before_gb_per_s"]
                    for r in rounds]
        bandwidth[label] = {"bytes_per_step": bytes_per_step, "threads": row["threads"],
                            "decode_ms": row["decode_ms"], "gb_per_s": gbps,
                            "stream_read_gb_per_s": stream_gbps[row["threads"]],
                            "fraction_of_stream": gbps / stream_gbps[row["threads"]],
                            "adjacent_stream_gb_per_s": [r["stream_before_gb_per_s"]
                                                         for r in rounds],
                            "fraction_of_adjacent_stream": statistics.median(adjacent),
                            "fraction_of_adjacent_stream_rounds": adjacent}
    doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "machine": bench.machine(), "versions": bench.versions(["llama"]),
           "loadavg_before": load_before, "loadavg_after": bench.loadavg(),
           "model": {"spec": spec, "prompt_tokens": tokens, "decode_steps": args.steps,
                     "seed": bench.SEED},
           "settings": {"rounds": args.rounds, "runs_per_round": args.runs, "threads": threads},
           "llama_parity_vs_tmc_f32": parity, "rows": rows, "ratios": ratios,
           "weights_files": files, "stream_read_gb_per_s": stream_gbps,
           "bandwidth": bandwidth}
    os.makedirs(args.results, exist_ok=True)
    # Hours and minutes too: a later run the same day keeps the earlier one's evidence.
    path = os.path.join(args.results, f"precision-gpt2-{time.strftime('%Y-%m-%d-%H%M')}.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"\nGPT-2 small, prompt {tokens} tokens then {args.steps} consecutive decoding steps; "
          f"medians of {args.rounds} rounds ({path})\n")
    print("| engine | threads | prefill ms | prefill, LM head on the last row, ms | decode ms/step | "
          "peak RSS MB |\n|---|---|---|---|---|---|")
    for row in rows:
        last = row.get("prefill_last_row_ms", row["prefill_ms"] if "llama" in row["engine"]
                       else None)
        print(f"| {row['engine']} | {row['threads']} | {row['prefill_ms']:.1f} | "
              f"{'' if last is None else f'{last:.1f}'} | {row['decode_ms']:.2f} | "
              f"{row['peak_rss_bytes'] / 1e6:.0f} |")
    print("\n| tmc precision | f32 file MB | tmc quantize file MB | llama.cpp GGUF MB | start + 1 "
          "token, f32 file ms | same, quantized file ms |\n|---|---|---|---|---|---|")
    for precision, f in files.items():
        print(f"| {precision} | {f['f32_file_bytes'] / 1e6:.0f} | "
              f"{f['quantized_file_bytes'] / 1e6:.0f} | {f['llama_gguf']} "
              f"{f['llama_gguf_bytes'] / 1e6:.0f} | {f['start_ms_f32_file']:.0f} | "
              f"{f['start_ms_quantized_file']:.0f} |")
    print("\n| engine | threads | bytes/step MB | decode ms | GB/s | stream read GB/s | "
          "fraction | stream reads just before, GB/s | fraction of those (median; rounds) |"
          "\n|---|---|---|---|---|---|---|---|---|")
    for label, b in bandwidth.items():
        adjacent = ", ".join(f"{g:.1f}" for g in b["adjacent_stream_gb_per_s"])
        rounds = ", ".join(f"{f:.0%}" for f in b["fraction_of_adjacent_stream_rounds"])
        print(f"| {label} | {b['threads']} | {b['bytes_per_step'] / 1e6:.0f} | "
              f"{b['decode_ms']:.2f} | {b['gb_per_s']:.1f} | {b['stream_read_gb_per_s']:.1f} | "
              f"{b['fraction_of_stream']:.0%} | {adjacent} | "
              f"{b['fraction_of_adjacent_stream']:.0%} ({rounds}) |")
    print()
    print_ratios(ratios)


if __name__ == "__main__":
    main()
