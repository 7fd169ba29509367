"""bench/e2e/batch_encode.py - many inputs encoded at once: tmc's batches against ONNX Runtime's batch
dimension, BERT base, one run.

    bench/e2e/batch_encode.py [--build-dir build] [--seqs 32] [--tokens 128] [--threads 1,2]
                              [--rounds 3] [--runs 3] [--ort-forms standard,fused]
                              [--spec examples/bert-base.tm] [--results bench/results]

The issue's target: BERT base, 32 sentences of 128 tokens, throughput >= 1.1x ONNX Runtime's
with batch 32, in the same run. tmc compiles the spec with `--emit=lib --max-batch 32` (or the
largest --seqs) and bench/e2e/batch_encode.c drives it: one tmr_batch_run of B inputs of T
tokens per round (runtime/tmr.h, "Batches": the linears multiply all rows of an executor
call as one GEMM, attention runs per input). The runtime splits a run so that each call's
rows fit max(max_seq, max_batch) rows of arena: a model of max_seq 512 runs 32 x 128 rows as
8 calls of 4 inputs (a model the compiler does not batch, ExecutorWriter::batchable in
compiler/ExecutorCalls.cpp, would carry one input per call: its library reports max_batch 1).
batch_encode.c reports the library's max_batch and the split; the JSON and the table record
them. ONNX Runtime (onnxruntime-node, bench/peers/ort_batch_runner.mjs;
session as every runner here: intra-op threads N, inter-op 1, sequential, graph optimization
"all") runs one session.run over input_ids [B, T] and an attention mask of ones, on graphs of
the same seeded weights (run.Model(...).prepare(), tmc init-weights --seed 1):
  standard  standard_model.py's BERT module (Hugging Face's BertModel as users export it,
            opset 14, dynamic batch and sequence axes), traced here with a [B, T] example
            (export_standard: the same module, axes and opset as standard_model.export,
            whose example is one sequence);
  fused     fused_onnx.py's graph (what ONNX Runtime's offline transformer optimizer writes:
            Attention, SkipLayerNormalization, EmbedLayerNormalization, BiasGelu), whose
            input_ids are [batch, sequence] already.
onnx_peer.py (bench/results/onnx-peer-*.json) timed these forms at one sequence, where
`standard` was ONNX Runtime's fastest f32 BERT graph (65.0 ms at 2 threads, fused 67.6, rows
66.6); at batch 32 they have not been compared, so both are timed and ONNX Runtime's figure is
its faster form at its faster thread count.

Inputs: input s is batch_encode.c's 31-bit LCG stream (ids_of here), segments all 0, no
padding. Before timing: every ONNX Runtime form's output against tmc's on the same ids (BERT
base's is its classifier on the first token, [B, 2]: examples/bert-base.tm has output =
classifier(classes = 2, pool = first), as run.py's BERT row; both forms need that head), max |ort - tmc| / max |tmc| <= run.py's PARITY_TOLERANCE (and the PyTorch
module's the standard graph was traced from, recorded); tmc's input 0 in the batch against
the same input run alone by the model's executable (batching must not change results;
recorded, a difference warned about). Timing: --rounds times, every (engine, B, threads)
runs once in a shuffled order, each a process of its own that loads the model, warms up with
one run and times --runs runs; the run times of all its processes are pooled. Per B:
sentences/s = B / the median run time, tokens/s = B x T / it, each engine at its faster thread
count (both counts kept), and tmc's sentences/s over ONNX Runtime's. Writes
RESULTS/batch-encode-bert-DATE-HHMM.json and prints a markdown table.
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
import run as bench  # noqa: E402  (bench/e2e/run.py: Model, run, peer_env, versions, ...)

ENGINES = ["tmc", "ort"]
NAMES = {"tmc": "tmc", "ort": "ONNX Runtime"}
ORT_FORMS = ["standard", "fused"]
# Sequences one tmc executor call may carry (tmc compile --max-batch; the default is 16).
MAX_BATCH = 32
# The target: tmc's throughput over ONNX Runtime's at 32 sequences of 128 tokens.
TARGET_SEQS = 32
TARGET_OVER_ORT = 1.1


def ids_of(s, count, vocab):
    """Input s's ids: batch_encode.c's ids_of (batch_decode.c's prompt_of), a 31-bit LCG."""
    x = (s * 7919 + 1) & 0xFFFFFFFF
    out = np.empty(count, np.int64)
    for i in range(count):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out[i] = (x >> 8) % vocab
    return out


def ids_matrix(seqs, tokens, vocab):
    return np.stack([ids_of(s, tokens, vocab) for s in range(seqs)])


def export_standard(model, path, ids):
    """standard_model.py's module of the spec exported as standard_model.export does (opset 14,
    dynamic batch and sequence axes), traced with the [B, T] ids and a mask of ones instead of one
    sequence. Returns the module's own output on those inputs and its input 0's difference from
    torch_model's (tmc's computation in PyTorch), relative to the largest value."""
    import torch
    import standard_model
    tm, module, names = standard_model.build(model.check_path, model.weights)
    if names != ["input_ids", "attention_mask"]:
        raise NotImplementedError("the standard form of this spec is not an encoder's")
    example = (torch.from_numpy(ids.astype(np.int64)), torch.ones(ids.shape, dtype=torch.long))
    with torch.no_grad():
        got = module(*example).numpy()
        want = tm(torch.from_numpy(ids[0].astype(np.int64))).numpy()
        error = bench.relative_error(got[0].reshape(-1), want.reshape(-1))
        axes = {name: {0: "batch", 1: "sequence"} for name in names}
        axes["logits"] = {0: "batch"}
        tmp = path + ".tmp"
        torch.onnx.export(module, example, tmp, input_names=names, output_names=["logits"],
                          dynamic_axes=axes, opset_version=standard_model.OPSET["standard"],
                          do_constant_folding=True)
    os.replace(tmp, path)
    return got, error


def export_forms(model, forms, ids):
    """ONNX Runtime's graphs, form -> path (each written once per work dir), and what the
    standard export's PyTorch module computed on `ids`."""
    out = os.path.join(model.dir, "onnx-batch")
    os.makedirs(out, exist_ok=True)
    graphs, torch_side = {}, {}
    if "standard" in forms:
        seqs = ids.shape[0]
        graphs["standard"] = os.path.join(out, f"standard-b{seqs}-t{ids.shape[1]}.onnx")
        saved = graphs["standard"] + ".torch.npz"
        if not (os.path.exists(graphs["standard"]) and os.path.exists(saved)):
            bench.log(f"   exporting the standard form (torch.onnx, opset 14) with a "
                      f"[{seqs}, {ids.shape[1]}] example")
            got, error = export_standard(model, graphs["standard"], ids)
            np.savez(saved, output=got, error=error)
        with np.load(saved) as data:
            torch_side = {"output": data["output"], "module_vs_torch_model": float(data["error"])}
    if "fused" in forms:
        graphs["fused"] = os.path.join(out, "fused.onnx")
        if not os.path.exists(graphs["fused"]):
            bench.log("   writing the fused form (fused_onnx.py)")
            bench.run([sys.executable, os.path.join(HERE, "fused_onnx.py"), model.check_path,
                       model.weights, graphs["fused"]])
    return graphs, torch_side


def ids_file(model, ids):
    path = os.path.join(model.dir, f"ids-b{ids.shape[0]}-t{ids.shape[1]}.i64")
    ids.astype("<i8").tofile(path)
    return path


def run_tmc(exe, model, seqs, tokens, threads, runs, output=None):
    """One batch_encode process: a warm-up run, then `runs` timed runs."""
    cmd = [exe, model.weights, str(seqs), str(tokens), str(threads), str(runs)]
    if output:
        cmd.append(output)
    data = bench.last_json(bench.run(cmd, env=bench.peer_env(threads)))
    if data["seqs"] != seqs or data["tokens"] != tokens or len(data["ms"]) != runs:
        raise RuntimeError(f"tmc at {seqs} inputs: unexpected result {data}")
    return data


def run_ort(graph, ids_path, seqs, threads, runs, check=None, optimized=None):
    """One ort_batch_runner process: a warm-up run and `runs` timed runs, or with `check` one
    run whose output it writes there."""
    cmd = ["node", os.path.join(bench.PEERS, "ort_batch_runner.mjs"), "--model", graph,
           "--ids", ids_path, "--seqs", str(seqs), "--threads", str(threads)]
    if check:
        bench.run(cmd + ["--check", check] + (["--optimized", optimized] if optimized else []),
                  env=bench.peer_env(threads))
        return None
    data = bench.last_json(bench.run(cmd + ["--rounds", str(runs)], env=bench.peer_env(threads)))
    if data["seqs"] != seqs or len(data["ms"]) != runs:
        raise RuntimeError(f"ONNX Runtime at {seqs} inputs: unexpected result {data}")
    return data


def check_parity(exe, model, graphs, torch_side, all_ids, threads):
    """Every form's output against tmc's on the same ids, per B; raises on a mismatch. Then
    tmc's input 0 in the largest batch against the executable's run of it alone."""
    import onnx_peer
    out = {"bound": bench.PARITY_TOLERANCE, "forms": {}, "optimized_operators": {}}
    reference = None
    for seqs, ids in sorted(all_ids.items()):
        tokens = ids.shape[1]
        dump = os.path.join(model.dir, f"tmc-b{seqs}.f32")
        data = run_tmc(exe, model, seqs, tokens, threads, 1, dump)
        if data["ids_sum"] != int(ids.sum()):
            raise RuntimeError(f"batch_encode.c's ids (sum {data['ids_sum']}) are not ids_of's "
                               f"(sum {int(ids.sum())})")
        out["tmc_library_max_batch"] = data["max_batch"]
        mine = np.fromfile(dump, "<f4").reshape(seqs, data["rows_per_input"], data["width"])
        if not np.isfinite(mine).all():
            raise RuntimeError(f"tmc's output at {seqs} inputs is not finite")
        reference = mine
        path = ids_file(model, ids)
        for form, graph in graphs.items():
            check = os.path.join(model.dir, f"ort-{form}-b{seqs}.f32")
            optimized = os.path.join(model.dir, f"ort-{form}-optimized.onnx")
            want_ops = form not in out["optimized_operators"]
            run_ort(graph, path, seqs, threads, 1, check=check, optimized=optimized if want_ops else None)
            if want_ops:
                out["optimized_operators"][form] = onnx_peer.operator_counts(optimized)
                os.remove(optimized)
            got = np.fromfile(check, "<f4")
            if got.size != mine.size:
                raise RuntimeError(f"ONNX Runtime {form} at {seqs} inputs: {got.size} outputs, "
                                   f"tmc has {mine.size}")
            error = bench.relative_error(got, mine.reshape(-1))
            out["forms"].setdefault(form, {})[str(seqs)] = error
            bench.log(f"   parity ort {form}, {seqs} inputs (max |ort - tmc| / max |tmc|): "
                      f"{error:.2e}")
            if not error <= bench.PARITY_TOLERANCE:
                raise RuntimeError(f"ONNX Runtime {form}'s output at {seqs} inputs differs from "
                                   f"tmc's ({error:.2e}); not timing unequal work")
        if torch_side and torch_side["output"].shape[0] == seqs:
            error = bench.relative_error(torch_side["output"].reshape(-1), mine.reshape(-1))
            out["torch_standard_module"] = {str(seqs): error, "module_vs_torch_model_input_0":
                                            torch_side["module_vs_torch_model"]}
            bench.log(f"   parity torch standard module, {seqs} inputs: {error:.2e}")
    # Batching must not change results: input 0 alone, through the model's executable.
    ids = all_ids[max(all_ids)]
    alone = model.tmc_output(ids[0], "input0-alone")
    batched = reference[0]
    difference = float(np.abs(alone.reshape(-1).astype(np.float64) -
                              batched.reshape(-1).astype(np.float64)).max())
    same = bool(np.array_equal(alone.reshape(-1), batched.reshape(-1)))
    out["tmc_input0_batched_vs_alone"] = {"seqs": int(max(all_ids)), "identical": same,
                                          "max_abs_difference": difference}
    bench.log(f"   tmc input 0 in a batch of {max(all_ids)} and alone: "
              f"{'identical' if same else f'differ by up to {difference:.2e}'}")
    return out


def summarize(samples):
    """One row per (label, B, threads): the run times of all its processes pooled."""
    rows = []
    # By B, then tmc before ONNX Runtime's forms, then threads.
    for (label, seqs, threads), results in sorted(samples.items(), key=lambda kv: (
            kv[0][1], kv[0][0] != "tmc", kv[0][0], kv[0][2])):
        times = [ms for r in results for ms in r["ms"]]
        median = statistics.median(times)
        tokens = results[0]["tokens"]
        rows.append({"engine": label.split(" ")[0], "label": label,
                     "form": label.split(" ", 1)[1] if " " in label else None,
                     "seqs": seqs, "threads": threads, "tokens": tokens,
                     "ms": median, "ms_min": min(times), "ms_max": max(times),
                     "runs_timed": len(times),
                     # Each process's median: the spread over rounds.
                     "ms_rounds": [statistics.median(r["ms"]) for r in results],
                     "sentences_per_s": seqs / (median / 1e3),
                     "tokens_per_s": seqs * tokens / (median / 1e3),
                     "peak_rss_bytes": max(r.get("peak_rss_bytes", 0) for r in results)})
        if label == "tmc":
            rows[-1]["max_batch"] = results[0]["max_batch"]
            rows[-1]["executor_calls"] = results[0]["executor_calls"]
            rows[-1]["sequences_per_call"] = results[0]["sequences_per_call"]
            rows[-1]["same_every_round"] = all(r["same_every_round"] for r in results)
    return rows


def per_seqs(rows, seqs):
    """Per B: each engine at its best (threads, and for ONNX Runtime form), both thread counts
    kept, and tmc's throughput over ONNX Runtime's."""
    out = []
    for b in seqs:
        entry = {"seqs": b}
        for engine in ENGINES:
            mine = [r for r in rows if r["engine"] == engine and r["seqs"] == b]
            if not mine:
                continue
            best = max(mine, key=lambda r: r["sentences_per_s"])
            entry[engine] = {key: best[key] for key in ("label", "form", "threads", "ms",
                                                        "sentences_per_s", "tokens_per_s")}
            entry[engine]["sentences_per_s_by"] = {f"{r['label']}, {r['threads']}t":
                                                   r["sentences_per_s"] for r in mine}
        if "tmc" in entry and "ort" in entry:
            entry["tmc_over_ort_throughput"] = (entry["tmc"]["sentences_per_s"] /
                                                entry["ort"]["sentences_per_s"])
        out.append(entry)
    return out


def targets(by_seqs, parity, tokens, spec):
    at = {e["seqs"]: e for e in by_seqs}
    ratio = at.get(TARGET_SEQS, {}).get("tmc_over_ort_throughput")
    # The target's workload only: another spec or length is measured, not judged.
    applies = tokens == 128 and spec == bench.MODELS["bert"][0]
    out = [{"target": f"BERT base, {TARGET_SEQS} sentences of 128 tokens: tmc's throughput over "
                      f"ONNX Runtime's with batch {TARGET_SEQS} (each at its best threads; ONNX "
                      "Runtime at its faster form)" + ("" if applies else
                                                       f" (this run: {spec}, {tokens} tokens, "
                                                       "not the target's workload)"),
            "limit": f">= {TARGET_OVER_ORT:g}x", "measured": ratio,
            "met": None if ratio is None or not applies else ratio >= TARGET_OVER_ORT}]
    same = parity["tmc_input0_batched_vs_alone"]["identical"]
    out.append({"target": "tmc's input 0 the same batched and alone", "limit": "equal",
                "measured": same, "met": same})
    return out


def ms_text(ms):
    return f"{ms:.1f}" if ms >= 10 else f"{ms:.3g}"


def markdown(doc):
    s = doc["settings"]
    rt = doc["tmc_runtime"]
    splits = "; ".join(f"B = {b}: {c['executor_calls']} call(s) of up to {c['sequences_per_call']}"
                       for b, c in rt["split"].items())
    lines = [f"{doc['model']['name']} ({doc['model']['spec']}), f32, seeded weights: B inputs of "
             f"{doc['model']['tokens']} tokens encoded per run (tmc: one tmr_batch_run; ONNX "
             f"Runtime: one session.run of input_ids [B, {doc['model']['tokens']}]). Run times of "
             f"{s['rounds']} interleaved rounds x {s['runs_per_round']} timed runs pooled (each "
             "process warms up with one run). sentences/s = B / median run; tokens/s = B x T / "
             f"median run. tmc's library (compiled with --max-batch {rt['max_batch_requested']}) "
             f"carries {rt['max_batch']} input(s) per executor call"
             + (" (the compiler does not batch this model)"
                if rt["max_batch"] == 1 and rt["max_batch_requested"] > 1 else "")
             + f", whose rows fit max(max_seq {rt['max_seq']}, max_batch {rt['max_batch']}) = "
             f"{rt['arena_rows']} rows: {splits}.",
             "",
             "| B | engine | threads | ms per run (median) | process medians | sentences/s | "
             "tokens/s | peak RSS MB |",
             "|---|---|---|---|---|---|---|---|"]
    best = {(e["seqs"], e[engine]["label"], e[engine]["threads"]) for e in doc["by_seqs"]
            for engine in ENGINES if engine in e}
    for r in doc["rows"]:
        mark = " **best**" if (r["seqs"], r["label"], r["threads"]) in best else ""
        name = NAMES[r["engine"]] + (f" {r['form']}" if r["form"] else "")
        spread = ", ".join(ms_text(m) for m in r["ms_rounds"])
        lines.append(f"| {r['seqs']} | {name}{mark} | {r['threads']} | {ms_text(r['ms'])} | {spread} | "
                     f"{r['sentences_per_s']:.2f} | {r['tokens_per_s']:.0f} | "
                     f"{r['peak_rss_bytes'] / 1e6:.0f} |")
    lines += ["", "| B | tmc sentences/s | ONNX Runtime sentences/s | tmc / ONNX Runtime throughput |",
              "|---|---|---|---|"]
    for e in doc["by_seqs"]:
        if "tmc" not in e or "ort" not in e:
            continue
        t, o = e["tmc"], e["ort"]
        lines.append(f"| {e['seqs']} | {t['sentences_per_s']:.2f} ({t['threads']}t) | "
                     f"{o['sentences_per_s']:.2f} ({o['form']}, {o['threads']}t) | "
                     f"{e['tmc_over_ort_throughput']:.2f}x |")
    lines += [""] + bench.targets_markdown(doc["targets"])
    return "\n".join(lines) + "\n"


def main():
    args, tmc, work, threads = bench.script_arguments(
        __doc__, "bench-batch-encode", 3,
        [("--seqs", str, str(TARGET_SEQS)), ("--tokens", int, 128),
         ("--ort-forms", str, ",".join(ORT_FORMS)), ("--spec", str, bench.MODELS["bert"][0])])
    seqs = [int(b) for b in args.seqs.split(",")]
    forms = [f for f in args.ort_forms.split(",") if f]
    for form in forms:
        if form not in ORT_FORMS:
            sys.exit(f"--ort-forms: {form} is not one of {', '.join(ORT_FORMS)}")
    spec = args.spec
    name = "bert" if spec == bench.MODELS["bert"][0] else \
        os.path.splitext(os.path.basename(spec))[0]

    model = bench.Model(name, spec, args.tokens, 0, ["ort"], work, tmc)
    if args.tokens > model.check["max_seq"]:
        sys.exit(f"--tokens {args.tokens} exceed max_seq {model.check['max_seq']}")
    model.prepare()  # the executable (input 0 alone) and the seeded weights
    max_batch = max([MAX_BATCH] + seqs)
    exe = bench.build_c_harness(tmc, model, max_batch, "batch_encode.c", "batch-encode-lib")
    vocab = model.check["vocab"]
    all_ids = {b: ids_matrix(b, args.tokens, vocab) for b in seqs}
    graphs, torch_side = export_forms(model, forms, all_ids[max(seqs)])
    parity = check_parity(exe, model, graphs, torch_side, all_ids, max(threads))
    ids_paths = {b: ids_file(model, ids) for b, ids in all_ids.items()}
    library_batch = parity["tmc_library_max_batch"]
    if library_batch < max(seqs):
        bench.log(f"   warning: tmc's library carries {library_batch} input(s) per executor call "
                  f"(compiled with --max-batch {max_batch})"
                  + (": the compiler does not batch this model (compiler/ExecutorCalls.cpp, "
                     "batchable), so tmr_batch_run runs the inputs one by one"
                     if library_batch == 1 else ""))

    load_before = bench.loadavg()
    samples = {}  # (label, B, threads) -> [one process's result per round]
    rng = random.Random(bench.SEED)
    labels = ["tmc"] + [f"ort {form}" for form in graphs]
    configs = [(label, b, t) for label in labels for b in seqs for t in threads]
    bench.log(f"== timing: {args.rounds} rounds of {len(configs)} processes, each a warm-up run "
              f"and {args.runs} timed (load {load_before})")
    for r in range(args.rounds):
        rng.shuffle(configs)
        for label, b, t in configs:
            if label == "tmc":
                data = run_tmc(exe, model, b, args.tokens, t, args.runs)
                if data["ids_sum"] != int(all_ids[b].sum()):
                    raise RuntimeError("batch_encode.c's ids changed")
            else:
                data = run_ort(graphs[label[4:]], ids_paths[b], b, t, args.runs)
            samples.setdefault((label, b, t), []).append(data)
        bench.log(f"   round {r + 1}/{args.rounds} done (load {bench.loadavg()})")
    load_after = bench.loadavg()

    rows = summarize(samples)
    for row in rows:
        if row.get("same_every_round") is False:
            bench.log(f"   warning: tmc's output changed between runs at {row['seqs']} inputs, "
                      f"{row['threads']} threads")
    by_seqs = per_seqs(rows, seqs)
    first_tmc = {b: next(r for r in rows if r["label"] == "tmc" and r["seqs"] == b) for b in seqs}
    check = model.check
    doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "machine": bench.machine(), "versions": bench.versions(["torch", "ort"]),
           "loadavg_before": load_before, "loadavg_after": load_after,
           "model": {"name": name, "spec": spec, "tokens": args.tokens, "seed": bench.SEED,
                     "output": check["output"],
                     "inputs": "batch_encode.c's ids_of: a 31-bit LCG stream per input, the same "
                               "for both engines (ids file for ONNX Runtime); segments 0; no "
                               "padding (tmc length 0, ONNX Runtime attention_mask of ones)"},
           "settings": {"rounds": args.rounds, "runs_per_round": args.runs, "threads": threads,
                        "seqs": seqs, "tmc_max_batch": max_batch, "ort_forms": list(graphs),
                        "ort_session": "intra-op N, inter-op 1, sequential, graph optimization "
                                       "all (ort_batch_runner.mjs, as ort_runner.mjs)",
                        "timing": "one process per (engine, B, threads) and round: load, one "
                                  "warm-up run, then the timed runs, each run timed whole"},
           "tmc_runtime": {"max_seq": check["max_seq"], "max_batch_requested": max_batch,
                           # tmr_model_info.max_batch of the library: 1 where the compiler
                           # does not batch the model.
                           "max_batch": library_batch,
                           "arena_rows": max(check["max_seq"], library_batch),
                           "split": {str(b): {"executor_calls": first_tmc[b]["executor_calls"],
                                              "sequences_per_call": first_tmc[b]["sequences_per_call"]}
                                     for b in seqs},
                           "note": "runtime/batch.cpp's Batch::run: consecutive inputs share an "
                                   "executor call while there are at most max_batch of them and "
                                   "their rows fit max(max_seq, max_batch) rows of arena; "
                                   "computed by batch_encode.c with the same rule from the "
                                   "library's max_batch"},
           "parity": parity, "rows": rows, "by_seqs": by_seqs}
    doc["targets"] = targets(by_seqs, parity, args.tokens, spec)
    os.makedirs(args.results, exist_ok=True)
    # Hours and minutes too: a later run the same day keeps the earlier one's evidence.
    path = os.path.join(args.results, f"batch-encode-{name}-{time.strftime('%Y-%m-%d-%H%M')}.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"\n{path}\n")
    print(markdown(doc))


if __name__ == "__main__":
    main()
