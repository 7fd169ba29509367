"""bench/e2e/batch_decode.py - many sequences decoded at once: tmc's batches against llama.cpp's
parallel sequences, GPT-2 small, one run.

    bench/e2e/batch_decode.py [--build-dir build] [--seqs 1,4,16,32] [--threads 1,2]
                              [--rounds 3] [--runs 2] [--prompt 128] [--steps 16]
                              [--kv-cache f16] [--results bench/results]

A decoding step of B sequences reads the weights once for all of them: tmc's runtime runs the
B rows of a step as one GEMM per linear (runtime/tmr.h, "Batches"), llama.cpp (node-llama-cpp's
CPU build) decodes the queued tokens of a context's sequences as one llama_decode. tmc compiles
GPT-2 small with `--emit=lib --max-batch 32` and bench/e2e/batch_decode.c drives it; llama.cpp
runs the same seeded weights as an f32 GGUF through bench/peers/llama_batch_runner.mjs (one
context of B sequences, flash attention on: its fastest here, as in llama_runner.mjs). The
key/value caches are f16 in both: llama.cpp's default type (node-llama-cpp's
experimentalKvCacheKeyType/ValueType, left unset: F16; each run reports the types it used),
and tmc's `--kv-cache f16` (`--kv-cache f32` for tmc's default, whose steps read twice the
bytes per sequence from the caches). Both get
the same B prompts of --prompt tokens (a deterministic stream per sequence), prefill them in
one batch, then take --steps greedy steps, each one batched call over the B sequences, timed
whole (the next-token choice included). Each process warms up with one round, then times
--runs rounds; each round's first step is left out (llama.cpp's first step after a prompt
rebuilds its graph). --rounds times, every (engine, B, threads) runs once, in a shuffled
order; the step times of all of them are pooled.

Reported per B, for each engine at its faster thread count (both counts' figures kept):
aggregate tokens/s = B / the median step time, the p50 and p99 per-token latency (a step
gives each sequence one token), and tmc's tokens/s over llama.cpp's. Targets: tmc at 16
sequences >= 8x its own single-sequence tokens/s, and >= 1.25x llama.cpp's at 16 sequences.
Before timing, the GGUF's logits are checked against tmc's (run.check_parity), and tmc's
greedy tokens of sequence 0 at B = 1 and B = 16 must be the same (batching must not change
results); every timed run's sequence-0 tokens are compared too. Writes
RESULTS/batch-decode-gpt2-DATE-HHMM.json and .svg (tokens/s and p50/p99 latency against B),
and prints a markdown table.
"""
import json
import math
import os
import random
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as bench  # noqa: E402  (bench/e2e/run.py: Model, export_peers, check_parity, ...)

ENGINES = ["tmc", "llama.cpp"]
COLORS = {"tmc": "#1f77b4", "llama.cpp": "#ff7f0e"}
# Sequences one tmc executor call carries (tmc compile --max-batch; the default is 16).
MAX_BATCH = 32
# The sequence counts the token check and the targets compare.
CHECK_SEQS = (1, 16)
TARGET_SPEEDUP_OVER_ONE = 8.0   # tmc at 16 sequences over tmc at 1, tokens/s
TARGET_OVER_LLAMA = 1.25        # tmc over llama.cpp at 16 sequences, tokens/s


def measure(engine, exe, model, gguf, seqs, threads, args, runs=None):
    """One process of `engine`: a warm-up round, then `runs` (--runs) timed rounds."""
    runs = args.runs if runs is None else runs
    if engine == "tmc":
        cmd = [exe, model.weights, str(seqs), str(args.prompt), str(args.steps), str(threads),
               str(runs)]
    else:
        cmd = ["node", os.path.join(bench.PEERS, "llama_batch_runner.mjs"), "--model", gguf,
               "--seqs", str(seqs), "--prompt", str(args.prompt), "--steps", str(args.steps),
               "--threads", str(threads), "--rounds", str(runs),
               "--vocab", str(model.check["vocab"])]
    data = bench.last_json(bench.run(cmd, env=bench.peer_env(threads)))
    if data["seqs"] != seqs or len(data["tokens"]) != args.steps + 1 or not data["step_ms"]:
        raise RuntimeError(f"{engine} at {seqs} sequences: unexpected result {data}")
    if engine == "tmc" and data["max_batch"] < seqs:
        raise RuntimeError(f"tmc's library carries {data['max_batch']} sequences a call, "
                           f"not {seqs}: compile it with a larger --max-batch")
    return data


def check_tokens(exe, model, args, threads):
    """tmc's greedy tokens of sequence 0 alone and among 16: batching must not change them."""
    tokens = {b: measure("tmc", exe, model, None, b, threads, args, runs=1)["tokens"]
              for b in CHECK_SEQS}
    same = tokens[CHECK_SEQS[0]] == tokens[CHECK_SEQS[1]]
    bench.log(f"   tmc sequence 0's {args.steps + 1} greedy tokens at {CHECK_SEQS[0]} and "
              f"{CHECK_SEQS[1]} sequences: {'the same' if same else 'DIFFERENT'}")
    if not same:
        bench.log(f"   warning: batching changed tmc's results: {tokens}")
    return {"seqs": list(CHECK_SEQS), "threads": threads, "same": same,
            "tokens": {str(b): t for b, t in tokens.items()}}


def summarize(samples):
    """One row per (engine, B, threads): the step times of all its processes pooled."""
    rows = []
    for (engine, seqs, threads), results in sorted(samples.items(),
                                                   key=lambda kv: (ENGINES.index(kv[0][0]),
                                                                   kv[0][1], kv[0][2])):
        steps = [ms for r in results for ms in r["step_ms"]]
        p50 = statistics.median(steps)
        row = {"engine": engine, "seqs": seqs, "threads": threads,
               "tokens_per_s": seqs / (p50 / 1e3),
               "step_ms_p50": p50, "step_ms_p99": float(np.percentile(steps, 99)),
               "step_ms_min": min(steps), "step_ms_max": max(steps), "steps_timed": len(steps),
               # Each process's tokens/s (B / its median step): the spread over rounds.
               "tokens_per_s_rounds": [seqs / (statistics.median(r["step_ms"]) / 1e3)
                                       for r in results],
               "prefill_ms": statistics.median(ms for r in results for ms in r["prefill_ms"]),
               "peak_rss_bytes": max(r.get("peak_rss_bytes", 0) for r in results)}
        if engine == "llama.cpp":
            row["llama_decode_calls"] = {
                key: max(r["llama_decode_calls"][key] for r in results) for key in ("prefill", "step")}
        rows.append(row)
    return rows


def best_rows(rows):
    """(engine, B) -> its row at the thread count with the higher tokens/s."""
    best = {}
    for row in rows:
        key = (row["engine"], row["seqs"])
        if key not in best or row["tokens_per_s"] > best[key]["tokens_per_s"]:
            best[key] = row
    return best


def per_seqs(rows, seqs):
    best = best_rows(rows)
    out = []
    for b in seqs:
        entry = {"seqs": b}
        for engine in ENGINES:
            row = best.get((engine, b))
            if row:
                entry[engine] = {key: row[key] for key in ("threads", "tokens_per_s", "step_ms_p50",
                                                           "step_ms_p99", "prefill_ms")}
                entry[engine]["tokens_per_s_by_threads"] = {
                    str(r["threads"]): r["tokens_per_s"] for r in rows
                    if r["engine"] == engine and r["seqs"] == b}
        if "tmc" in entry and "llama.cpp" in entry:
            entry["tmc_over_llama_tokens_per_s"] = (entry["tmc"]["tokens_per_s"] /
                                                    entry["llama.cpp"]["tokens_per_s"])
        out.append(entry)
    # Each B's tokens/s over the same engine's at one sequence: what batching buys.
    single = {engine: best[(engine, 1)]["tokens_per_s"] for engine in ENGINES if (engine, 1) in best}
    for entry in out:
        for engine in ENGINES:
            if engine in entry and engine in single:
                entry[engine]["over_one_sequence"] = entry[engine]["tokens_per_s"] / single[engine]
    return out


def targets(by_seqs, token_check):
    at = {e["seqs"]: e for e in by_seqs}
    out = []
    one, sixteen = at.get(1, {}).get("tmc"), at.get(16, {}).get("tmc")
    speedup = sixteen["tokens_per_s"] / one["tokens_per_s"] if one and sixteen else None
    out.append({"target": "tmc at 16 sequences: tokens/s over its own at 1 sequence",
                "limit": f">= {TARGET_SPEEDUP_OVER_ONE:g}x", "measured": speedup,
                "met": None if speedup is None else speedup >= TARGET_SPEEDUP_OVER_ONE})
    ratio = at.get(16, {}).get("tmc_over_llama_tokens_per_s")
    out.append({"target": "tmc over llama.cpp at 16 sequences, tokens/s (each at its best threads)",
                "limit": f">= {TARGET_OVER_LLAMA:g}x", "measured": ratio,
                "met": None if ratio is None else ratio >= TARGET_OVER_LLAMA})
    out.append({"target": "tmc's greedy tokens of sequence 0 the same alone and batched (1 and 16 "
                          "sequences before timing, and every timed run)",
                "limit": "equal", "measured": token_check["same"], "met": token_check["same"]})
    return out


def svg_plot(doc):
    """Two panels against B (log2): aggregate tokens/s, and p50 (solid) and p99 (dashed)
    per-token latency, each engine at its best thread count; both y axes logarithmic."""
    entries = [e for e in doc["by_seqs"] if any(engine in e for engine in ENGINES)]
    seqs = [e["seqs"] for e in entries]
    panel_w, panel_h, left, top, gap = 420, 320, 70, 50, 100
    legend_top = top + panel_h + 60
    width, height = left + 2 * panel_w + gap + 20, legend_top + 20 * (len(ENGINES) + 1) + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="20" font-size="14">GPT-2 small, {doc["model"]["prompt_tokens"]}-token '
           f'prompts, then {doc["model"]["decode_steps"]} greedy steps of B sequences: tmc vs '
           f'llama.cpp (f32), {doc["date"]}</text>']
    if not seqs:
        return "\n".join(out + ["</svg>"]) + "\n"
    x_lo, x_hi = math.log2(min(seqs)) - 0.3, math.log2(max(seqs)) + 0.3
    # Each panel: its (key, dash pattern) series and its title.
    panels = [([("tokens_per_s", "")], "aggregate tokens/s (log)"),
              ([("step_ms_p50", ""), ("step_ms_p99", "6,4")],
               "per-token latency, ms (log): p50 solid, p99 dashed")]
    for index, (series, label) in enumerate(panels):
        x0 = left + index * (panel_w + gap)
        values = [e[engine][key] for e in entries for engine in ENGINES if engine in e
                  for key, _ in series if e[engine][key] > 0]
        if not values:
            continue
        y_lo, y_hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
        y_hi = max(y_hi, y_lo + 1)

        def px(b):
            return x0 + (math.log2(b) - x_lo) / (x_hi - x_lo) * panel_w

        def py(v):
            return top + panel_h - (math.log10(v) - y_lo) / (y_hi - y_lo) * panel_h

        out.append(f'<rect x="{x0}" y="{top}" width="{panel_w}" height="{panel_h}" fill="none" '
                   'stroke="#444"/>')
        out.append(f'<text x="{x0 + panel_w / 2}" y="{top - 8}" text-anchor="middle">{label}</text>')
        for b in seqs:
            out.append(f'<line x1="{px(b):.1f}" y1="{top}" x2="{px(b):.1f}" y2="{top + panel_h}" '
                       'stroke="#eee"/>')
            out.append(f'<text x="{px(b):.1f}" y="{top + panel_h + 16}" text-anchor="middle">{b}</text>')
        out.append(f'<text x="{x0 + panel_w / 2}" y="{top + panel_h + 34}" text-anchor="middle">'
                   'sequences decoded together (B)</text>')
        for e in range(y_lo, y_hi + 1):
            for m in (1, 2, 5):
                v = m * 10 ** e
                if v > 10 ** y_hi:
                    break
                y = py(v)
                out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + panel_w}" y2="{y:.1f}" '
                           f'stroke="{"#ccc" if m == 1 else "#f2f2f2"}"/>')
                out.append(f'<text x="{x0 - 4}" y="{y + 4:.1f}" text-anchor="end" '
                           f'font-size="10">{v:g}</text>')
        for engine in ENGINES:
            points = [(e["seqs"], e[engine]) for e in entries if engine in e]
            for key, dash in series:
                pts = [(b, row[key], row["threads"]) for b, row in points if row[key] > 0]
                xy = " ".join(f"{px(b):.1f},{py(v):.1f}" for b, v, _ in pts)
                dashes = f' stroke-dasharray="{dash}"' if dash else ""
                out.append(f'<polyline points="{xy}" fill="none" stroke="{COLORS[engine]}" '
                           f'stroke-width="2"{dashes}/>')
                for b, v, threads in pts:
                    out.append(f'<circle cx="{px(b):.1f}" cy="{py(v):.1f}" r="3" '
                               f'fill="{COLORS[engine]}"/>')
                    if key == "tokens_per_s":  # the thread count each point is at
                        out.append(f'<text x="{px(b) + 5:.1f}" y="{py(v) - 6:.1f}" font-size="9" '
                                   f'fill="{COLORS[engine]}">{threads}t</text>')
    for index, engine in enumerate(ENGINES):
        y = legend_top + 20 * index
        out.append(f'<line x1="{left}" y1="{y - 4}" x2="{left + 36}" y2="{y - 4}" '
                   f'stroke="{COLORS[engine]}" stroke-width="2"/>')
        text = {"tmc": "tmc (runtime batches, one GEMM per linear a step)",
                "llama.cpp": "llama.cpp (node-llama-cpp, one context of B sequences, "
                             "flash attention)"}[engine]
        out.append(f'<text x="{left + 42}" y="{y}">{text}; each point at the faster thread count '
                   '("Nt")</text>')
    ratios = ", ".join(f"B={e['seqs']}: {e['tmc_over_llama_tokens_per_s']:.2f}x" for e in entries
                       if "tmc_over_llama_tokens_per_s" in e)
    out.append(f'<text x="{left}" y="{legend_top + 20 * len(ENGINES)}">tmc tokens/s over '
               f'llama.cpp\'s: {ratios}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def markdown(doc):
    kv = doc["settings"].get("tmc_kv_cache", "f32")
    lines = [f"GPT-2 small, f32 weights, {kv} key/value caches (tmc `--kv-cache {kv}`; "
             f"llama.cpp's {', '.join(doc['settings'].get('llama_kv_cache_types', []))}): "
             f"{doc['model']['prompt_tokens']}-token prompts, then "
             f"{doc['model']['decode_steps']} greedy steps of B sequences together; step times of "
             f"{doc['settings']['rounds']} interleaved rounds x {doc['settings']['runs_per_round']} "
             "timed rounds pooled (each round's first step left out). tokens/s = B / median step; "
             "latency = step time (one token per sequence); each engine at its faster thread count.",
             "",
             "| sequences | engine | threads | tokens/s | over 1 sequence | p50 ms | p99 ms | prefill ms "
             "| tokens/s by threads | tmc / llama.cpp tokens/s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for e in doc["by_seqs"]:
        for engine in ENGINES:
            if engine not in e:
                continue
            r = e[engine]
            by_threads = ", ".join(f"{t}: {v:.1f}" for t, v in r["tokens_per_s_by_threads"].items())
            ratio = e.get("tmc_over_llama_tokens_per_s")
            cell = f"{ratio:.2f}x" if engine == "tmc" and ratio is not None else ""
            over = f"{r['over_one_sequence']:.2f}x" if "over_one_sequence" in r else ""
            lines.append(f"| {e['seqs']} | {engine} | {r['threads']} | {r['tokens_per_s']:.1f} | "
                         f"{over} | {r['step_ms_p50']:.2f} | {r['step_ms_p99']:.2f} | {r['prefill_ms']:.1f} | "
                         f"{by_threads} | {cell} |")
    lines += [""] + bench.targets_markdown(doc["targets"])
    return "\n".join(lines) + "\n"


def main():
    args, tmc, work, threads = bench.script_arguments(
        __doc__, "bench-batch-decode", 2,
        [("--seqs", str, "1,4,16,32"), ("--prompt", int, 128), ("--steps", int, 16),
         ("--kv-cache", str, "f16")])
    seqs = [int(b) for b in args.seqs.split(",")]

    spec = bench.MODELS["gpt2"][0]
    model = bench.Model("gpt2", spec, args.prompt, 0, ["llama"], work, tmc)
    if args.prompt + args.steps > model.check["max_seq"]:
        sys.exit(f"--prompt {args.prompt} + --steps {args.steps} exceed max_seq "
                 f"{model.check['max_seq']}")
    model.prepare()  # the executable (the parity reference) and the seeded weights
    bench.export_peers(model, ["llama"])  # model.gguf, f32
    parity = bench.check_parity(model, ["llama"])
    gguf = os.path.join(model.dir, "model.gguf")
    max_batch = max([MAX_BATCH] + seqs)
    exe = bench.build_c_harness(tmc, model, max_batch, "batch_decode.c",
                                f"batch-lib-kv{args.kv_cache}", ["--kv-cache", args.kv_cache])
    token_check = check_tokens(exe, model, args, max(threads))

    load_before = bench.loadavg()
    samples = {}  # (engine, B, threads) -> [one process's result per round]
    rng = random.Random(bench.SEED)
    configs = [(engine, b, t) for engine in ENGINES for b in seqs for t in threads]
    bench.log(f"== timing: {args.rounds} rounds of {len(configs)} runs, each a warm-up round and "
              f"{args.runs} timed (load {load_before})")
    for r in range(args.rounds):
        rng.shuffle(configs)
        for engine, b, t in configs:
            samples.setdefault((engine, b, t), []).append(
                measure(engine, exe, model, gguf, b, t, args))
        bench.log(f"   round {r + 1}/{args.rounds} done (load {bench.loadavg()})")
    load_after = bench.loadavg()

    # Every timed run's sequence 0 against the check's single-sequence tokens: tmc's must all
    # be the same; llama.cpp's (its own arithmetic, ~1e-4 from tmc's logits) are recorded.
    reference = token_check["tokens"][str(CHECK_SEQS[0])]
    same_tokens = {}
    for engine in ENGINES:
        runs = [(b, t, result["tokens"]) for (e, b, t), results in samples.items() if e == engine
                for result in results]
        same_tokens[engine] = {"runs": len(runs), "same_as_tmc_single": sum(tok == reference
                                                                            for _, _, tok in runs)}
        if engine == "tmc" and same_tokens[engine]["same_as_tmc_single"] != len(runs):
            token_check["same"] = False
            differing = sorted({(b, t) for b, t, tok in runs if tok != reference})
            bench.log(f"   warning: tmc's sequence 0 tokens differ from its single-sequence run "
                      f"at (B, threads) {differing}")
    token_check["timed_runs"] = same_tokens
    rows = summarize(samples)
    for row in rows:
        calls = row.get("llama_decode_calls")
        if calls and calls["step"] != 1:
            bench.log(f"   warning: llama.cpp at {row['seqs']} sequences took {calls['step']} "
                      "llama_decode calls for one step")
    by_seqs = per_seqs(rows, seqs)
    doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "machine": bench.machine(), "versions": bench.versions(["llama"]),
           "loadavg_before": load_before, "loadavg_after": load_after,
           "model": {"spec": spec, "prompt_tokens": args.prompt, "decode_steps": args.steps,
                     "seed": bench.SEED, "prompts": "batch_decode.c's prompt_of: a 31-bit LCG "
                                                     "stream per sequence, the same for both engines"},
           "settings": {"rounds": args.rounds, "runs_per_round": args.runs, "threads": threads,
                        "seqs": seqs, "tmc_max_batch": max_batch, "llama_flash_attention": True,
                        "tmc_kv_cache": args.kv_cache,
                        "llama_kv_cache_types": sorted({json.dumps(r["kv_cache_types"])
                                                        for (e, _, _), results in samples.items()
                                                        if e == "llama.cpp" for r in results}),
                        "first_step_of_each_round_dropped": True,
                        "step_timing": "the batched call and each sequence's greedy next token"},
           "parity": parity, "token_check": token_check, "rows": rows, "by_seqs": by_seqs}
    doc["targets"] = targets(by_seqs, token_check)
    os.makedirs(args.results, exist_ok=True)
    # Hours and minutes too: a later run the same day keeps the earlier one's evidence.
    stem = os.path.join(args.results, f"batch-decode-gpt2-{time.strftime('%Y-%m-%d-%H%M')}")
    with open(stem + ".json", "w") as f:
        json.dump(doc, f, indent=1)
    with open(stem + ".svg", "w") as f:
        f.write(svg_plot(doc))
    print(f"\n{stem}.json, {stem}.svg\n")
    print(markdown(doc))


if __name__ == "__main__":
    main()
