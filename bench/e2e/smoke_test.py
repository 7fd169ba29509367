"""bench/e2e/smoke_test.py - the end-to-end benchmark's plumbing, fast and without peers or network.

usage: smoke_test.py --build-dir BUILD --work DIR

Runs bench/e2e/run.py on a tiny decoder with no peers (one round, one run,
one thread) and checks what it writes: the results JSON's schema, the
Markdown table, the SVG and tmc's per-kernel profile (TMR_PROFILE). Also
pins the FLOP counts the GFLOP/s figures divide by, against GPT-2 small's and
BERT base's published counts (PERFORMANCE.md). No timing is asserted.
"""
import argparse
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import report  # noqa: E402

failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    tmc = os.path.join(args.build_dir, "bin", "tmc")
    results = os.path.join(args.work, "results")

    # FLOPs of the benchmark's workloads: 2 x multiply-adds, dense attention.
    def check(spec):
        return json.loads(subprocess.run([tmc, "check", os.path.join(REPO, "examples", spec + ".tm"), "--json"],
                                         check=True, capture_output=True, text=True).stdout)

    for spec, tokens, expected in (("gpt2-small", 128, 32.2e9), ("bert-base", 128, 22.3e9)):
        got = report.flops(check(spec), tokens, 0, "prefill")
        expect(abs(got / expected - 1) < 0.005, f"{spec} prefill FLOPs {got:.4g}, expected {expected:.4g}")
    # One GPT-2 decoding step after 128 tokens: linears + head + attention over 129 keys.
    decode = report.flops(check("gpt2-small"), 128, 0, "decode")
    expect(abs(decode - (2 * 84934656 + 2 * 768 * 50257 + 12 * 4 * 129 * 768)) < 1,
           f"GPT-2 decode FLOPs {decode}")

    subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "--build-dir", args.build_dir,
                    "--work", args.work, "--results", results, "--custom",
                    "tiny:tests/e2e/specs/decoder-gpt.tm:8", "--peers", "none", "--rounds", "1",
                    "--runs", "1", "--threads", "1"], check=True)
    with open(os.path.join(results, "latest.json")) as f:
        doc = json.load(f)
    for key in ("date", "machine", "loadavg_before", "loadavg_after", "versions", "settings",
                "sgemm_peak_gflops", "fma_peak_gflops", "models", "results", "targets", "profile"):
        expect(key in doc, f"latest.json lacks '{key}'")
    model = doc["models"].get("tiny", {})
    for key in ("compile_s", "compile_cpu_s", "executable_bytes", "parity", "peers"):
        expect(key in model, f"models.tiny lacks '{key}'")
    expect(model.get("executable_bytes", 0) > 0, "executable size is 0")
    rows = sorted((r["phase"], r["engine"]) for r in doc["results"])
    expect(rows == [("decode", "tmc"), ("prefill", "tmc"), ("prefill", "tmc-last")],
           f"result rows {rows}")
    # The second prompt row computes the LM head for the last row only
    # (decoder-gpt.tm: d_model 32, vocab 50; 7 of the 8 rows' heads left out).
    prefill = {r["engine"]: r["gflop"] for r in doc["results"] if r["phase"] == "prefill"}
    expect(abs(prefill.get("tmc", 0) - prefill.get("tmc-last", 0) - 2 * 7 * 32 * 50 / 1e9)
           < 1e-12, f"prompt GFLOP with the head on every row and on the last {prefill}")
    for r in doc["results"]:
        for key, kind in (("workload", str), ("threads", int), ("engine", str), ("ms", float),
                          ("ms_min", float), ("ms_max", float), ("gflops", float), ("peak_rss_bytes", int)):
            expect(isinstance(r.get(key), kind), f"result field {key}={r.get(key)!r} is not {kind.__name__}")
        expect(r["engine"] in ("tmc", "tmc-last") and r["ms"] > 0 and
               r["ms_min"] <= r["ms"] <= r["ms_max"], f"result {r}")
        expect((r["tokens_per_s"] is not None) == (r["phase"] == "decode"), "tokens/s only for decode")
        # Rates against the FMA peak measured in the run; the decoding steps'
        # spread around their median (one round: the round's own).
        expect(r.get("fma_peak_share") is not None and
               abs(r["fma_peak_share"] - r["gflops"] / doc["fma_peak_gflops"]["1"]) < 1e-9,
               f"fma_peak_share of {r}")
        if r["phase"] == "decode":
            expect(0 < r.get("step_p10_ms", 0) <= r["ms"] <= r.get("step_p90_ms", 0),
                   f"decode steps' p10 <= median <= p90 in {r}")
        else:
            expect(r.get("step_p10_ms") is None, f"a step spread on a prompt row {r}")
    expect(any(t["target"].startswith("tiny executable size") for t in doc["targets"]), "size target")
    profile = doc["profile"].get("tiny", {}).get("1", {})
    expect(sorted(profile) == ["prompt", "step"], f"profile phases {sorted(profile)}")
    for phase, data in profile.items():
        ops = {k["op"] for k in data["kernels"]}
        expect({"tm.linear", "tm.attention", "tm.embed"} <= ops, f"profile {phase} ops {ops}")
        expect(abs(sum(k["share"] for k in data["kernels"]) - 1) < 1e-6, "profile shares sum to 1")
        expect(all(k["ms_per_run"] >= 0 for k in data["kernels"]), "profile times")
    with open(os.path.join(results, "latest.md")) as f:
        table = f.read()
    expect("| workload | thr | engine | ms | steps p10–p90 |" in table, "latest.md has the table")
    expect("% FMA peak" in table, "latest.md reads rates against the FMA peak")
    ET.parse(os.path.join(results, "latest.svg"))  # well-formed SVG
    if failures:
        sys.exit(f"{len(failures)} check(s) failed")
    print("bench smoke test: ok")


if __name__ == "__main__":
    main()
