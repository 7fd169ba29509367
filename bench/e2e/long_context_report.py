"""bench/e2e/long_context_report.py - long_context.py's results: targets, markdown, a log-log SVG.

The SVG is written by hand (matplotlib is not installed here): two panels, time per prompt and
peak RSS against T, both axes logarithmic, one line per engine (colour) and model (dash), and
a legend with each line's least-squares slope of log y on log T.
"""
import math

import numpy as np

import long_context_peers as lcp

NAMES = {"tmc": "tmc", "torch": "PyTorch", "ort": "ONNX Runtime"}
COLORS = {"tmc": "#1f77b4", "torch": "#d62728", "ort": "#2ca02c"}
DASHES = {"decoder": "", "longformer": "7,4", "bigbird": "2,3"}


def describe_mask(terms):
    args = {"sliding_window": "size", "global": "tokens", "random": "per_row"}
    return " + ".join(t["kind"] + (f"({args[t['kind']]} = {t[args[t['kind']]]}"
                                   + (f", seed = {t['seed']}" if t["kind"] == "random" else "") + ")"
                                   if t["kind"] in args else "") for t in terms)


def fit(points, key):
    good = [(p["T"], p[key]) for p in points if p.get(key)]
    if len(good) < 2:
        return None
    x, y = np.log([g[0] for g in good]), np.log([g[1] for g in good])
    return float(np.polyfit(x, y, 1)[0])


def lines_of(points):
    """(engine, model) -> its points sorted by T."""
    out = {}
    for p in points:
        out.setdefault((p["engine"], p["model"]), []).append(p)
    return {k: sorted(v, key=lambda p: p["T"]) for k, v in out.items()}


def targets(points):
    at = {(p["engine"], p["model"], p["T"]): p for p in points if "median_ms" in p}
    models = sorted({p["model"] for p in points}, key=list(lcp.SPECS).index)
    out = []

    def add(name, measured, limit, met, note=""):
        out.append({"target": name, "measured": measured, "limit": limit, "met": met, "note": note})

    for m in models:
        for length, limit in ((4096, 5.0), (16384, 10.0)):
            tmc, ort = at.get(("tmc", m, length)), at.get(("ort", m, length))
            name = f"{m}: tmc >= {limit:g}x faster than ONNX Runtime (dense mask) at T={length}"
            if tmc and ort:
                ratio = ort["median_ms"] / tmc["median_ms"]
                add(name, ratio, limit, ratio >= limit)
            else:
                state = next((p["status"] for p in points if p["engine"] == "ort" and p["model"] == m
                              and p["T"] == length), "not run")
                add(name, None, limit, None, f"not measured ({state})")
        small, large = at.get(("tmc", m, 4096)), at.get(("tmc", m, 16384))
        name = f"{m}: tmc prefill grows <= 4.2x from T=4096 to T=16384"
        growth = large["median_ms"] / small["median_ms"] if small and large else None
        add(name, growth, 4.2, None if growth is None else growth <= 4.2)
        rss = {t: at[("tmc", m, t)]["peak_rss_mib"] for t in (4096, 8192, 16384) if ("tmc", m, t) in at}
        name = f"{m}: tmc peak RSS grows (at most) linearly in T"
        if len(rss) == 3:
            d1, d2 = rss[8192] - rss[4096], rss[16384] - rss[8192]
            slope = math.log(rss[16384] / rss[4096]) / math.log(4)
            ratio = d2 / d1 if d1 > 1 else None
            met = slope <= 1.1 and (ratio is None and d2 < 8 or ratio is not None and ratio <= 2.5)
            add(name, slope, 1.1, met, f"log-log slope 4k..16k {slope:.2f}; increments 4k->8k "
                f"{d1:.0f} MiB, 8k->16k {d2:.0f} MiB (linear: x2, quadratic: x4)")
        else:
            add(name, None, 1.1, None, "not measured")
    return out


def svg_plot(doc):
    """Two log-log panels, time and peak RSS against T, one line per engine and model."""
    lines = lines_of(doc["points"])
    lengths = sorted({p["T"] for p in doc["points"]})
    panel_w, panel_h, left, top, gap = 460, 340, 70, 50, 110
    legend_top = top + panel_h + 60
    models = sorted({m for _, m in lines}, key=list(lcp.SPECS).index)
    engines = [e for e in NAMES if any(e == engine for engine, _ in lines)]
    height = legend_top + 20 * len(engines) + 20
    width = left + 2 * panel_w + gap + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="20" font-size="14">Long context, {doc["settings"]["threads"]} threads: '
           f'tmc (sparse masks) vs PyTorch and ONNX Runtime (dense mask), {doc["date"]}</text>']
    x_lo, x_hi = math.log2(min(lengths)) - 0.15, math.log2(max(lengths)) + 0.15
    for index, (key, label) in enumerate((("median_ms", "time per prompt (ms)"),
                                          ("peak_rss_mib", "peak RSS (MiB)"))):
        x0 = left + index * (panel_w + gap)
        values = [p[key] for p in doc["points"] if p.get(key)]
        if not values:
            continue
        y_lo, y_hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
        y_hi = max(y_hi, y_lo + 1)

        def px(t):
            return x0 + (math.log2(t) - x_lo) / (x_hi - x_lo) * panel_w

        def py(v):
            return top + panel_h - (math.log10(v) - y_lo) / (y_hi - y_lo) * panel_h

        out.append(f'<rect x="{x0}" y="{top}" width="{panel_w}" height="{panel_h}" fill="none" stroke="#444"/>')
        out.append(f'<text x="{x0 + panel_w / 2}" y="{top - 8}" text-anchor="middle">{label}, log-log</text>')
        for t in lengths:
            out.append(f'<line x1="{px(t):.1f}" y1="{top}" x2="{px(t):.1f}" y2="{top + panel_h}" stroke="#eee"/>')
            out.append(f'<text x="{px(t):.1f}" y="{top + panel_h + 16}" text-anchor="middle">'
                       f'{t if t < 1024 else f"{t // 1024}k"}</text>')
        out.append(f'<text x="{x0 + panel_w / 2}" y="{top + panel_h + 34}" text-anchor="middle">'
                   'sequence length T (tokens)</text>')
        for e in range(y_lo, y_hi + 1):
            for m in (1, 2, 5):
                v = m * 10 ** e
                if v > 10 ** y_hi:
                    break
                y = py(v)
                out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + panel_w}" y2="{y:.1f}" '
                           f'stroke="{"#ccc" if m == 1 else "#f2f2f2"}"/>')
                out.append(f'<text x="{x0 - 4}" y="{y + 4:.1f}" text-anchor="end" font-size="10">{v:g}</text>')
        for (engine, model), pts in lines.items():
            pts = [p for p in pts if p.get(key)]
            xy = " ".join(f"{px(p['T']):.1f},{py(p[key]):.1f}" for p in pts)
            dash = f' stroke-dasharray="{DASHES.get(model, "")}"' if DASHES.get(model) else ""
            out.append(f'<polyline points="{xy}" fill="none" stroke="{COLORS[engine]}" stroke-width="2"{dash}/>')
            for p in pts:
                out.append(f'<circle cx="{px(p["T"]):.1f}" cy="{py(p[key]):.1f}" r="3" fill="{COLORS[engine]}"/>')
    column = (width - left) / max(1, len(models))
    for engine, model in lines:  # a column per model, a row per engine
        x = left + column * models.index(model)
        y = legend_top + 20 * engines.index(engine)
        slopes = doc["fits"][f"{engine}/{model}"]
        text = "slope " + ", ".join(f"{k} {v:.2f}" for k, v in (("time", slopes["time"]),
                                                                   ("RSS", slopes["rss"])) if v is not None)
        dash = f' stroke-dasharray="{DASHES[model]}"' if DASHES.get(model) else ""
        out.append(f'<line x1="{x}" y1="{y - 4}" x2="{x + 36}" y2="{y - 4}" stroke="{COLORS[engine]}" '
                   f'stroke-width="2"{dash}/>')
        short = "ORT" if engine == "ort" else NAMES[engine]
        out.append(f'<text x="{x + 42}" y="{y}">{short}, {model}: {text}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def markdown(doc):
    lines_out = []
    at = {(p["engine"], p["model"], p["T"]): p for p in doc["points"]}
    for m in doc["models"]:
        lines_out += ["", f"**{m}** ({doc['models'][m]['mask']}); median ms (peak RSS MiB)", "",
                      "| T | tmc | PyTorch | ONNX Runtime | PyTorch / tmc | ORT / tmc |", "|---|---|---|---|---|---|"]
        for t in sorted({p["T"] for p in doc["points"] if p["model"] == m}):
            cells, tmc = [], at.get(("tmc", m, t), {}).get("median_ms")
            for e in ("tmc", "torch", "ort"):
                p = at.get((e, m, t))
                if p is None:
                    cells.append("-")
                elif "median_ms" in p:
                    cells.append(f"{p['median_ms']:.1f} ({p['peak_rss_mib']:.0f})" +
                                 ("" if p["status"] == "ok" else " *"))
                else:
                    cells.append(p["status"])
            for e in ("torch", "ort"):
                p = at.get((e, m, t), {})
                cells.append(f"{p['median_ms'] / tmc:.2f}x" if tmc and p.get("median_ms") else "-")
            lines_out.append(f"| {t} | " + " | ".join(cells) + " |")
    states = doc.get("machine_state", [])
    if states:
        threads = str(doc["settings"]["threads"])
        lines_out += ["", f"Machine state (FMA peak at {threads} threads, core round trip): " + "; ".join(
            f"{s['when']} {s['fma_peak_gflops'][threads]:.0f} GFLOP/s, "
            f"{s['core_round_trip_ns']} ns" for s in states)]
    lines_out += ["", "Targets:", ""]
    for t in doc["targets"]:
        state = "n/a" if t["met"] is None else "met" if t["met"] else "NOT met"
        value = "" if t["measured"] is None else f" measured {t['measured']:.2f} (limit {t['limit']:g})"
        lines_out.append(f"- {t['target']}: **{state}**{value}" + (f"; {t['note']}" if t["note"] else ""))
    return "\n".join(lines_out) + "\n"
