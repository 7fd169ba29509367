"""bench/e2e/report.py - figures, targets, profile summary, table, chart and README of run.py.

FLOPs count every multiply-add twice, as a dense engine executes them: all
linear layers, the LM or classifier head (over every prompt row, as tmc, torch
and ONNX Runtime compute it; over the last row for llama.cpp, and for tmc's
second prompt row, "tmc-last", the prompt as generation runs it), and
attention's two products over all keys (a causal prompt counts T x T, as
PERFORMANCE.md does).
"""
import html
import json
import os
import re
import statistics

ENGINES = {"tmc": "tmc", "tmc-last": "tmc, LM head on the last row", "torch": "PyTorch",
           "ort": "ONNX Runtime", "llama": "llama.cpp"}
COLORS = {"tmc": "#1f77b4", "tmc-last": "#17becf", "torch": "#ee4c2c", "ort": "#7f7f7f",
          "llama": "#2ca02c"}
# Engines whose prompt run computes the LM head for the last row only.
LAST_ROW_HEAD = ("tmc-last", "llama")


def _stack_flops(cfg, d, rows, keys, kv_rows, cross_rows=0):
    h, kvh, hd = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    gated = cfg["ffn"] in ("swiglu", "geglu")

    def attention(q_rows, key_rows, projected_rows):
        return (2 * q_rows * d * h * hd + 4 * projected_rows * d * kvh * hd
                + 2 * q_rows * h * hd * d + 4 * q_rows * key_rows * h * hd)

    per_layer = attention(rows, keys, kv_rows) + 2 * rows * d * cfg["d_ff"] * (3 if gated else 2)
    if cfg.get("cross_attention"):
        per_layer += attention(rows, cross_rows, cross_rows)
    return per_layer * cfg["layers"]


def _head_flops(check, rows):
    out = check["output"]
    if out.startswith("lm_head"):
        return 2 * rows * check["d_model"] * check["vocab"]
    if out.startswith("classifier"):
        classes = int(re.search(r"classes = (\d+)", out).group(1))
        return 2 * check["d_model"] * classes
    return 0


def flops(check, tokens, source, phase, last_row_head=False):
    """FLOPs of the prompt run ("prefill") or of one decoding step after `tokens` ("decode");
    with last_row_head, the prompt's head over its last row only."""
    d = check["d_model"]
    if last_row_head and phase == "prefill":
        return flops(check, tokens, source, phase) - _head_flops(check, tokens) + \
            _head_flops(check, 1)
    if phase == "decode":
        return _stack_flops(check["decoder"], d, 1, tokens + 1, 1) + _head_flops(check, 1)
    if "encoder" in check and "decoder" in check:
        encoder = _stack_flops(check["encoder"], d, source, source, source)
        return encoder + _stack_flops(check["decoder"], d, tokens, tokens, tokens, source) + \
            _head_flops(check, tokens)
    stack = check.get("decoder") or check.get("encoder")
    return _stack_flops(stack, d, tokens, tokens, tokens) + _head_flops(check, tokens)


def workload_name(model, phase):
    names = {"gpt2_small": "GPT-2 small", "bert_base": "BERT base", "transformer_base": "Transformer base"}
    name = names.get(model["check"]["model"], model["check"]["model"])
    if phase == "decode":
        return f"{name} decode (a step after {model['tokens']})"
    if model["source"]:
        return f"{name} encode {model['source']} + decode {model['tokens']}"
    return f"{name} prefill {model['tokens']}"


def summarize(models, samples, threads, peak, fma=None):
    """One row per (model, phase, threads, engine), with medians over rounds and ratios."""
    rows = []
    for m in models:
        info = {"check": m.check, "tokens": len(m.tokens), "source": 0 if m.source is None else len(m.source)}
        phases = ["prefill"] + (["decode"] if m.decoder_only else [])
        for phase in phases:
            for t in threads:
                by_engine = {}
                for engine in ["tmc", "tmc-last"] + m.peers:
                    # tmc's runs time the prompt both ways (--bench's prefill_ms
                    # and prefill_last_row_ms).
                    key, source = (("prefill_last_row_ms", "tmc") if engine == "tmc-last"
                                   else (f"{phase}_ms", engine))
                    got = [s[key] for s in samples.get((m.name, t, source), []) if s.get(key)]
                    if not got or (engine == "tmc-last" and phase != "prefill"):
                        continue
                    ms = statistics.median(got)
                    rss = max(s["peak_rss_bytes"] for s in samples[(m.name, t, source)])
                    work = flops(m.check, info["tokens"], info["source"], phase,
                                 last_row_head=engine in LAST_ROW_HEAD)
                    gflops = work / ms / 1e6
                    by_engine[engine] = ms
                    # The decoding steps' spread: each round's 10th and 90th
                    # percentiles of its steps, the median over rounds.
                    spread = {"p10": None, "p90": None}
                    for q in spread if phase == "decode" else ():
                        values = [s[f"decode_{q}_ms"] for s in samples[(m.name, t, source)]
                                  if s.get(f"decode_{q}_ms")]
                        spread[q] = statistics.median(values) if values else None
                    rows.append({
                        "model": m.name, "workload": workload_name(info, phase), "phase": phase,
                        "threads": t, "engine": engine, "ms": ms, "ms_min": min(got), "ms_max": max(got),
                        "rounds": len(got), "per_round_ms": got, "gflop": work / 1e9, "gflops": gflops,
                        "sgemm_peak_share": gflops / peak[t] if peak.get(t) else None,
                        "fma_peak_share": gflops / fma[t] if fma and fma.get(t) else None,
                        "step_p10_ms": spread["p10"], "step_p90_ms": spread["p90"],
                        "tokens_per_s": 1000.0 / ms if phase == "decode" else None,
                        "peak_rss_bytes": rss})
                # A peer against tmc doing the same work: llama.cpp's prompt
                # against tmc's with the head on the last row too.
                for row in rows:
                    if row["model"] == m.name and row["phase"] == phase and row["threads"] == t:
                        mine = "tmc-last" if row["engine"] == "llama" and "tmc-last" in by_engine \
                            else "tmc"
                        row["tmc_over_peer"] = (by_engine[mine] / row["ms"]
                                                if not row["engine"].startswith("tmc")
                                                and mine in by_engine else None)
    return rows


def targets(results, models):
    """The issue's targets at 2 threads; each says whether it is met and by how much it is missed."""
    def ratio(model, phase, peer):
        for r in results:
            if (r["model"], r["phase"], r["threads"], r["engine"]) == (model, phase, 2, peer):
                return r["tmc_over_peer"]
        return None

    def best(model, phase, engine):
        """(ms, threads) of `engine`'s fastest thread count, or None."""
        rows = [r for r in results if (r["model"], r["phase"], r["engine"]) == (model, phase, engine)]
        return min(((r["ms"], r["threads"]) for r in rows), default=None)

    def fma_share(model, phase):
        for r in results:
            if (r["model"], r["phase"], r["threads"], r["engine"]) == (model, phase, 2, "tmc"):
                return r.get("fma_peak_share")
        return None

    out = []
    for name, model, phase, peer, limit in (
            ("GPT-2 small prefill vs ONNX Runtime (2 threads)", "gpt2", "prefill", "ort", 0.75),
            ("BERT base vs ONNX Runtime (2 threads)", "bert", "prefill", "ort", 0.8),
            ("GPT-2 small decode vs llama.cpp f32 (2 threads)", "gpt2", "decode", "llama", 1.0)):
        value = ratio(model, phase, peer)
        if value is not None:
            out.append({"target": name, "limit": limit, "unit": "x (tmc/peer time)", "measured": value,
                        "met": value <= limit, "miss_by": max(0.0, value / limit - 1),
                        "tmc_fma_peak_share": fma_share(model, phase)})
    # Decoding as users run it: each engine at its own best thread count.
    mine, theirs = best("gpt2", "decode", "tmc"), best("gpt2", "decode", "llama")
    if mine and theirs:
        value = mine[0] / theirs[0]
        out.append({"target": f"GPT-2 small decode vs llama.cpp f32, each at its best thread count "
                              f"(tmc {mine[1]}, llama.cpp {theirs[1]})",
                    "limit": 1.0, "unit": "x (tmc/peer time)", "measured": value, "met": value <= 1.0,
                    "miss_by": max(0.0, value - 1), "tmc_fma_peak_share": fma_share("gpt2", "decode")})
    for key, m in models.items():
        if key == "gpt2":
            out.append({"target": "GPT-2 small compile time (wall)", "limit": 30.0, "unit": "s",
                        "measured": m.compile_s, "met": m.compile_s <= 30.0,
                        "miss_by": max(0.0, m.compile_s / 30.0 - 1)})
        size = m.exe_bytes / 1e6
        out.append({"target": f"{key} executable size (no weights inside)", "limit": 5.0, "unit": "MB",
                    "measured": size, "met": size <= 5.0, "miss_by": max(0.0, size / 5.0 - 1)})
    return out


def _part(site):
    """'decoder.layers.3.self_attn @ file:1:2' -> 'decoder self_attn'."""
    scope = site.split(" @ ")[0]
    scope = re.sub(r"\.layers\.\d+", "", scope)
    return scope.replace(".", " ")


def summarize_profiles(profiles):
    """Per model, thread count and phase: ms per run by (layer part, op, kernel), largest first."""
    out = {}
    for model, by_threads in profiles.items():
        for threads, entries in by_threads.items():
            phases = {}
            for e in entries:
                runs = phases.setdefault(e["phase"], {"runs": 0, "rows": {}})
                # Every call site runs once per run of its phase.
                runs["runs"] = max(runs["runs"], e["calls"])
                key = (_part(e["site"]), e["op"], e["kernel"])
                row = runs["rows"].setdefault(key, {"ms": 0.0, "calls": 0})
                row["ms"] += e["ms"]
                row["calls"] += e["calls"]
            for phase, data in phases.items():
                n = max(data["runs"], 1)
                total = sum(r["ms"] for r in data["rows"].values()) / n
                rows = sorted(({"part": k[0], "op": k[1], "kernel": k[2], "ms_per_run": v["ms"] / n,
                                "calls_per_run": v["calls"] / n,
                                "share": (v["ms"] / n) / total if total else 0.0}
                               for k, v in data["rows"].items()), key=lambda r: -r["ms_per_run"])
                out.setdefault(model, {}).setdefault(threads, {})[phase] = {
                    "runs": n, "ms_per_run": total, "kernels": rows}
    return out


def _fmt_ms(r):
    return f"{r['ms']:.1f} ({r['ms_min']:.1f}–{r['ms_max']:.1f})" if r["ms"] >= 10 else \
        f"{r['ms']:.2f} ({r['ms_min']:.2f}–{r['ms_max']:.2f})"


def coretype_sentence(settings):
    """Which OpenBLAS core type torch ran with, and the measurements that chose it."""
    trials = settings.get("openblas_coretype_gflops") or {}
    chosen = settings.get("peer_env", {}).get("OPENBLAS_CORETYPE")
    allocator = (" PyTorch allocates through jemalloc, keeping the memory it frees."
                 if "jemalloc" in settings.get("peer_env", {}).get("LD_PRELOAD", "") else "")
    if not trials or not chosen:
        return allocator
    return (f" PyTorch's OpenBLAS core type: {chosen}, the fastest of " +
            ", ".join(f"{c} ({g:.0f} GFLOP/s)" if g is not None else f"{c} (failed)"
                      for c, g in trials.items()) + " (torch.mm, 1 thread, measured first)." + allocator)


def round_trip_sentence(doc):
    """Where the vCPUs sat while the rounds ran (a VM moves them; tmc's 2-thread times move too)."""
    trips = [ns for per_round in doc.get("core_round_trip_ns", {}).values() for ns in per_round
             if ns is not None]
    if not trips:
        return ""
    return (f" A cache line's round trip between the two CPUs, measured before each round: "
            f"{min(trips)}-{max(trips)} ns (one core's two threads ~70, one CCD ~100-200, two CCDs ~450-600).")


def markdown(doc):
    m = doc["machine"]
    peak = doc["sgemm_peak_gflops"]
    fma = doc.get("fma_peak_gflops", {})
    lines = [f"Date: {doc['date']}. Machine: {m['cores']} vCPUs of an {m['cpu']}, "
             f"{m['memory_bytes'] / 2**30:.0f} GiB. Load average before {doc['loadavg_before']}, "
             f"after {doc['loadavg_after']}." + (f" {doc['note']}" if doc.get("note") else ""),
             "",
             "Versions: " + ", ".join(f"{k} {v}" for k, v in doc["versions"].items()) + ". " +
             ("sgemm peak (torch.mm on OpenBLAS, N = 2048, best of 10 per round, best round): " +
              ", ".join(f"{v:.0f} GFLOP/s at {k} thread{'s' if k != '1' else ''}" for k, v in peak.items())
              + "." if any(peak.values()) else "sgemm peak not measured (no peers).") +
             (" f32 FMA peak, the compute limit the % column reads against (bench_fma_peak, as "
              "`tmc tune` measures it, best round): " +
              ", ".join(f"{v:.0f} GFLOP/s at {k} thread{'s' if k != '1' else ''}" for k, v in fma.items())
              + "." if any(fma.values()) else "") + coretype_sentence(doc["settings"]) +
             round_trip_sentence(doc),
             f"Medians over {doc['settings']['rounds']} interleaved rounds of {doc['settings']['runs_per_round']} "
             "runs (range over rounds in parentheses); ratio = tmc time / peer time (< 1: tmc faster).",
             "",
             "Decoding steps: the median over all steps of a round; \"steps p10–p90\" is their 10th and "
             "90th percentiles (a wide one is a bimodal engine, not a median to quote).",
             "",
             "| workload | thr | engine | ms | steps p10–p90 | tmc/peer | GFLOP/s | % FMA peak | tokens/s "
             "| peak RSS MB |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["results"]:
        share = r.get("fma_peak_share")
        spread = (f"{r['step_p10_ms']:.1f}–{r['step_p90_ms']:.1f}"
                  if r.get("step_p10_ms") and r.get("step_p90_ms") else "")
        lines.append("| {w} | {t} | {e} | {ms} | {spread} | {ratio} | {gf:.0f} | {share} | {tps} | "
                     "{rss:.0f} |".format(
                         w=r["workload"], t=r["threads"], e=ENGINES[r["engine"]], ms=_fmt_ms(r),
                         spread=spread,
                         ratio=f"{r['tmc_over_peer']:.2f}" if r.get("tmc_over_peer") else "",
                         gf=r["gflops"], share=f"{100 * share:.0f}%" if share else "",
                         tps=f"{r['tokens_per_s']:.1f}" if r["tokens_per_s"] else "",
                         rss=r["peak_rss_bytes"] / 1e6))
    lines += ["", "| model | tmc compile, wall s | CPU s | executable MB |", "|---|---|---|---|"]
    for name, info in doc["models"].items():
        lines.append(f"| {name} | {info['compile_s']:.1f} | {info['compile_cpu_s']:.1f} | "
                     f"{info['executable_bytes'] / 1e6:.2f} |")
    if doc["targets"]:
        lines += ["", "| target | limit | measured | met | tmc at % of the FMA peak (2 threads) |",
                  "|---|---|---|---|---|"]
        for t in doc["targets"]:
            miss = "yes" if t["met"] else \
                f"no: {t['measured'] / t['limit']:.2f}x the limit (needs {100 * (1 - t['limit'] / t['measured']):.0f}% less)"
            share = t.get("tmc_fma_peak_share")
            lines.append(f"| {t['target']} | ≤ {t['limit']:g} {t['unit']} | {t['measured']:.2f} | {miss} | "
                         f"{f'{100 * share:.0f}%' if share else ''} |")
    return "\n".join(lines) + "\n" + misses_markdown(doc)


def kernel_gflops(doc, model, phase, kernel):
    """GFLOP/s of a linear kernel's calls (2 x rows x K x N each) or of a prompt's
    self-attention (4 x T x T x head_dim x heads, dense, as the table counts it), or None."""
    info = doc["models"][model]
    rows = {"prompt": info["tokens"], "step": 1, "encode": info["source_tokens"]}.get(phase)
    if not rows or kernel["ms_per_run"] <= 0:
        return None
    linear = re.match(r"linear_k(\d+)_n(\d+)", kernel["kernel"])
    attention = re.match(r"attention_h(\d+)_kv\d+_d(\d+)", kernel["kernel"])
    if linear:
        work = 2 * rows * int(linear.group(1)) * int(linear.group(2))
    elif attention and kernel["part"].endswith("self_attn") and phase != "step":
        work = 4 * rows * rows * int(attention.group(1)) * int(attention.group(2))
    else:
        return None
    return work * kernel["calls_per_run"] / kernel["ms_per_run"] / 1e6


def profile_markdown(doc, top=8):
    lines = []
    for model, by_threads in doc["profile"].items():
        for threads, phases in by_threads.items():
            for phase, data in phases.items():
                lines += ["", f"{model}, {threads} thread(s), {phase}: {data['ms_per_run']:.2f} ms in kernels per run",
                          "", "| part | op | kernel | calls/run | ms/run | share | GFLOP/s |",
                          "|---|---|---|---|---|---|---|"]
                for k in data["kernels"][:top]:
                    gflops = kernel_gflops(doc, model, phase, k)
                    lines.append(f"| {k['part']} | {k['op']} | `{k['kernel']}` | {k['calls_per_run']:.0f} | "
                                 f"{k['ms_per_run']:.2f} | {100 * k['share']:.0f}% | "
                                 f"{'' if gflops is None else f'{gflops:.0f}'} |")
    return "\n".join(lines) + "\n"


def misses_markdown(doc, top=5):
    """For each missed speed target: where tmc's time goes at 2 threads (its profile)."""
    lines = []
    for t in doc["targets"]:
        if t["met"] or "x (tmc/peer" not in t["unit"]:
            continue
        model = "gpt2" if t["target"].startswith("GPT-2") else "bert"
        phase = "step" if "decode" in t["target"] else "prompt"
        data = doc["profile"].get(model, {}).get("2", {}).get(phase)
        if not data:
            continue
        parts = []
        for k in data["kernels"][:top]:
            gflops = kernel_gflops(doc, model, phase, k)
            parts.append(f"{k['part']} `{k['kernel']}` {k['ms_per_run']:.1f} ms" +
                         (f" ({gflops:.0f} GFLOP/s)" if gflops else ""))
        lines.append(f"- {t['target']}: {t['measured']:.2f}x, limit {t['limit']:g}x. tmc's kernels take "
                     f"{data['ms_per_run']:.1f} ms per run: " + "; ".join(parts) + ".")
    return ("\nWhere the missed targets' time goes (tmc's profile, 2 threads):\n\n" + "\n".join(lines) + "\n"
            if lines else "")


def svg(doc):
    """Grouped bars: time relative to tmc per workload (log-free, tmc = 1) at each thread count."""
    groups = []
    for r in doc["results"]:
        key = (r["workload"], r["threads"])
        if not groups or groups[-1][0] != key:
            groups.append((key, []))
        groups[-1][1].append(r)
    groups.sort(key=lambda g: (g[0][1], g[0][0]))
    bar, gap, left, top, height = 14, 22, 330, 40, 18
    rows = sum(len(g[1]) for g in groups)
    total_h = top + rows * height + len(groups) * gap + 40
    width = 980
    scale_max = max((r["ms"] / next(x["ms"] for x in g if x["engine"] == "tmc")
                     for _, g in groups for r in g if any(x["engine"] == "tmc" for x in g)), default=1)
    scale_max = max(scale_max, 1.0) * 1.1
    plot_w = width - left - 120
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total_h}" '
           f'font-family="sans-serif" font-size="12">',
           f'<text x="10" y="20" font-size="14">tmc vs peers, time relative to tmc (shorter is faster; '
           f'{html.escape(doc["date"])})</text>']
    y = top
    for (workload, threads), group in groups:
        base = next((x["ms"] for x in group if x["engine"] == "tmc"), None)
        out.append(f'<text x="10" y="{y + 12}">{html.escape(workload)}, {threads} thr</text>')
        for r in group:
            rel = r["ms"] / base if base else 0
            w = plot_w * rel / scale_max
            out.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar}" fill="{COLORS[r["engine"]]}"/>')
            out.append(f'<text x="{left + w + 4:.1f}" y="{y + 11}">{ENGINES[r["engine"]]} '
                       f'{r["ms"]:.1f} ms ({rel:.2f}x)</text>')
            y += height
        y += gap
    x1 = left + plot_w / scale_max
    out.append(f'<line x1="{x1:.1f}" y1="{top - 5}" x2="{x1:.1f}" y2="{y - gap}" stroke="black" '
               f'stroke-dasharray="4,3"/>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_all(doc, results_dir, readme=None):
    def atomic(path, text):
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)

    atomic(os.path.join(results_dir, "latest.json"), json.dumps(doc, indent=1) + "\n")
    table = markdown(doc)
    atomic(os.path.join(results_dir, "latest.md"),
           "# End-to-end benchmark (bench/e2e/run.py)\n\n" + table +
           "\n## Where tmc's time goes (TMR_PROFILE, largest kernels)\n" + profile_markdown(doc))
    atomic(os.path.join(results_dir, "latest.svg"), svg(doc))
    if readme:
        with open(readme) as f:
            text = f.read()
        begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
        if begin in text and end in text:
            head, rest = text.split(begin, 1)
            _, tail = rest.split(end, 1)
            atomic(readme, head + begin + "\n" + table + end + tail)
