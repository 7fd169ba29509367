"""bench/e2e/long_decode.py - decoding after a long prompt: tmc's key/value cache precisions
against llama.cpp, GPT-2 small, one run.

    bench/e2e/long_decode.py [--build-dir build] [--prompt 896] [--threads 1,2] [--rounds 3]
                             [--runs 2] [--steps 32] [--results bench/results]

After a prompt of --prompt tokens a decoding step reads the keys and values of every earlier
token as well as the weights: with q4 weights (69 MB a step for GPT-2 small) the caches of 896
tokens are 70 MB more in f32, 35 MB in f16 or bf16. tmc compiles GPT-2 small with `--precision
q4` and each `--kv-cache` (f32, bf16, f16); llama.cpp (node-llama-cpp's CPU build) runs the same
seeded weights as a Q4_0 GGUF with its defaults, which are its fastest here: f16 caches and
flash attention. The GGUF's next-token logits after the prompt are checked against tmc f32's
first (bench/e2e/precision.py's bound for Q4_0). Each engine at each thread count: the prompt,
then --steps consecutive greedy steps, timed as llama-bench's "tg" (steps 2..N); engines
interleaved in a shuffled order every round; medians over rounds. Writes
RESULTS/long-decode-gpt2-DATE-HHMM.json and prints markdown tables.
"""
import json
import os
import random
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import precision  # noqa: E402  (LlamaPeer, time_tmc, check_llama)
import run as bench  # noqa: E402

CACHES = ["f32", "bf16", "f16"]


def main():
    args, tmc, work, threads = bench.script_arguments(
        __doc__, "bench-long-decode", 2, [("--prompt", int, 896), ("--steps", int, 32)])

    spec = bench.MODELS["gpt2"][0]
    model = bench.Model("gpt2", spec, args.prompt, 0, ["llama"], work, tmc)
    if args.prompt + args.steps > model.check["max_seq"]:
        sys.exit(f"--prompt {args.prompt} + --steps {args.steps} exceed max_seq "
                 f"{model.check['max_seq']}")
    model.prepare()  # f32 executable (the parity reference) and the seeded weights
    exes = {}
    for cache in CACHES:
        exes[cache] = f"{model.exe}-q4-kv{cache}"
        bench.run([tmc, "compile", model.spec, "--precision", "q4", "--kv-cache", cache,
                   "-o", exes[cache]])
    f32_logits = model.tmc_output(model.tokens, "f32")[-1].astype(np.float64)
    gguf = os.path.join(model.dir, "model-q4_0.gguf")
    if not os.path.exists(gguf):
        import gguf_writer
        import torch_model
        gguf_writer.write_gpt2(gguf, model.check, torch_model.load_safetensors(model.weights),
                               os.path.join(bench.REPO, "examples", "tokenizers", "gpt2"), "q4_0")
    parity = precision.check_llama(model, gguf, "q4_0", f32_logits)
    bench.log(f"   llama.cpp Q4_0: next-token logits within {parity:.1e} of tmc f32's")

    load_before = bench.loadavg()
    samples = {}
    rng = random.Random(bench.SEED)
    for t in threads:
        peer = precision.LlamaPeer(model, gguf, "llama.cpp Q4_0", t, args.steps)
        try:
            labels = [f"tmc q4, kv_cache {c}" for c in CACHES] + ["llama.cpp Q4_0"]
            for r in range(args.rounds):
                rng.shuffle(labels)
                for label in labels:
                    if label.startswith("tmc "):
                        cache = label.rsplit(" ", 1)[1]
                        result = precision.time_tmc(exes[cache], model, t, args.runs, args.steps)
                    else:
                        result = peer.measure(args.runs)
                    samples.setdefault((label, t), []).append(result)
                bench.log(f"   {t} thread(s): round {r + 1}/{args.rounds} (load {bench.loadavg()})")
        finally:
            peer.close()

    rows = precision.median_rows(samples)
    best = {}
    for row in rows:
        entry = best.setdefault(row["engine"], row)
        if row["decode_ms"] < entry["decode_ms"]:
            best[row["engine"]] = row
    peer_best = best["llama.cpp Q4_0"]
    ratios = {f"{label} / llama.cpp Q4_0, decode, each at its best threads":
              {"ratio": row["decode_ms"] / peer_best["decode_ms"],
               "threads": [row["threads"], peer_best["threads"]]}
              for label, row in best.items() if label.startswith("tmc ")}
    doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "machine": bench.machine(), "versions": bench.versions(["llama"]),
           "loadavg_before": load_before, "loadavg_after": bench.loadavg(),
           "model": {"spec": spec, "prompt_tokens": args.prompt, "decode_steps": args.steps,
                     "seed": bench.SEED},
           "settings": {"rounds": args.rounds, "runs_per_round": args.runs, "threads": threads},
           "llama_q4_0_parity_vs_tmc_f32": parity, "rows": rows, "ratios": ratios}
    os.makedirs(args.results, exist_ok=True)
    path = os.path.join(args.results,
                        f"long-decode-gpt2-{time.strftime('%Y-%m-%d-%H%M')}.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"\nGPT-2 small, q4 weights, prompt {args.prompt} tokens then {args.steps} consecutive "
          f"decoding steps; medians of {args.rounds} rounds ({path})\n")
    print("| engine | threads | prefill ms | decode ms/step (rounds) |\n|---|---|---|---|")
    for row in rows:
        rounds = ", ".join(f"{d:.2f}" for d in row["decode_ms_rounds"])
        print(f"| {row['engine']} | {row['threads']} | {row['prefill_ms']:.1f} | "
              f"{row['decode_ms']:.2f} ({rounds}) |")
    print()
    precision.print_ratios(ratios)


if __name__ == "__main__":
    main()
