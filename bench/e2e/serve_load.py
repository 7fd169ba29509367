"""bench/e2e/serve_load.py - `MODEL serve` under many concurrent clients, GPT-2 small, one run.

    bench/e2e/serve_load.py [--build-dir build] [--clients 64] [--requests 2] [--max-tokens 16]
                            [--max-batch 32] [--threads 2] [--results bench/results]

Compiles GPT-2 small (examples/gpt2-small.tm, seeded weights as bench/e2e/run.py makes them),
starts its server on a loopback port with --max-batch slots, and sends --clients x --requests
completions of token-id prompts (16 to 64 tokens, each its own seed; temperature 0.8, top_k 40)
three ways: each request alone first (one at a time: the expected tokens), then every client at
once, each sending its requests one after the other on its own connection (Python's
http.client; half of them streamed as server-sent events). Every concurrent response must equal
its request's alone response: errors, lost responses (no reply, or fewer tokens) and mixed-up
ones (other tokens) are counted, and the run fails unless all three are zero. Reports the
latency of each request (p50, p99, max), the aggregate generated tokens per second, and the
batch occupancy the server's /metrics saw; writes RESULTS/serve-load-gpt2-DATE-HHMM.json.
"""
import argparse
import concurrent.futures
import http.client
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as bench  # noqa: E402


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def complete(port, body):
    """(token ids, latency s) of one completion on a fresh connection."""
    start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("POST", "/v1/completions", body=json.dumps(body))
    response = conn.getresponse()
    if response.status != 200:
        text = response.read().decode()
        conn.close()
        raise RuntimeError(f"HTTP {response.status}: {text[:200]}")
    tokens = []
    if body.get("stream"):
        for line in response:
            line = line.decode().strip()
            if line == "data: [DONE]":
                break
            if line.startswith("data: "):
                tokens += json.loads(line[6:])["choices"][0]["token_ids"]
    else:
        tokens = json.loads(response.read())["choices"][0]["token_ids"]
    conn.close()
    return tokens, time.monotonic() - start


def metrics(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(bench.REPO, "build"))
    parser.add_argument("--results", default=os.path.join(bench.REPO, "bench", "results"))
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--requests", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--max-batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    tmc = os.path.join(args.build_dir, "bin", "tmc")
    work = os.path.join(args.build_dir, "bench-serve-load")
    spec = bench.MODELS["gpt2"][0]
    model = bench.Model("gpt2", spec, 16, 0, [], work, tmc)
    exe = model.exe + "-serve"
    bench.log(f"== gpt2: tmc compile {spec} --max-batch {args.max_batch}")
    bench.run([tmc, "compile", model.spec, "--max-batch", str(args.max_batch), "-o", exe])
    if not os.path.exists(model.weights):
        bench.run([tmc, "init-weights", model.spec, "-o", model.weights, "--seed", str(bench.SEED)])

    rng = random.Random(1)
    vocab = model.check["vocab"]
    requests = []
    for client in range(args.clients):
        mine = []
        for r in range(args.requests):
            prompt = [rng.randrange(vocab) for _ in range(rng.randrange(16, 65))]
            mine.append({"prompt": prompt, "max_tokens": args.max_tokens, "temperature": 0.8,
                         "top_k": 40, "seed": client * 1000 + r, "stream": (client + r) % 2 == 0})
        requests.append(mine)

    server = subprocess.Popen([exe, "serve", "--weights", model.weights, "--port", "0",
                               "--max-batch", str(args.max_batch), "--threads", str(args.threads),
                               "--max-queue", str(args.clients * args.requests)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = server.stdout.readline()
    if "http://127.0.0.1:" not in line:
        sys.exit(f"the server did not start: {line!r} {server.stderr.read()}")
    port = int(line.split("http://127.0.0.1:")[1].split()[0])
    try:
        bench.log(f"   {args.clients * args.requests} requests alone (the expected tokens)")
        expected, alone_latency = [], []
        for mine in requests:
            row = []
            for body in mine:
                tokens, seconds = complete(port, body)
                row.append(tokens)
                alone_latency.append(seconds)
            expected.append(row)
        before = metrics(port)
        bench.log(f"   {args.clients} clients at once, {args.requests} requests each")
        errors, lost, mixed, latency = [], 0, 0, []

        def client(index):
            out = []
            for r, body in enumerate(requests[index]):
                try:
                    out.append((r, *complete(port, body)))
                except Exception as e:  # noqa: BLE001 - counted, reported
                    out.append((r, None, repr(e)))
            return index, out

        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
            results = list(pool.map(client, range(args.clients)))
        wall = time.monotonic() - start
        generated = 0
        for index, out in results:
            for r, tokens, extra in out:
                if tokens is None:
                    errors.append(f"client {index} request {r}: {extra}")
                    continue
                latency.append(extra)
                generated += len(tokens)
                if len(tokens) < len(expected[index][r]):
                    lost += 1
                elif tokens != expected[index][r]:
                    mixed += 1
        after = metrics(port)
    finally:
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=120)
    steps = after.get("tmc_batch_occupancy_count", 0) - before.get("tmc_batch_occupancy_count", 0)
    sequences = after.get("tmc_batch_occupancy_sum", 0) - before.get("tmc_batch_occupancy_sum", 0)
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": bench.machine(), "model": "gpt2 (examples/gpt2-small.tm), f32, seeded weights",
        "clients": args.clients, "requests_per_client": args.requests,
        "max_tokens": args.max_tokens, "max_batch": args.max_batch, "threads": args.threads,
        "requests": args.clients * args.requests, "errors": len(errors), "error_messages": errors[:10],
        "lost": lost, "mixed_up": mixed, "server_exit": server.returncode,
        "latency_s": {"p50": percentile(latency, 50), "p99": percentile(latency, 99),
                      "max": max(latency)} if latency else None,
        "alone_latency_s": {"p50": percentile(alone_latency, 50)},
        "wall_s": wall, "generated_tokens": generated, "tokens_per_second": generated / wall,
        "mean_sequences_per_step": sequences / steps if steps else None,
    }
    os.makedirs(args.results, exist_ok=True)
    path = os.path.join(args.results, time.strftime("serve-load-gpt2-%Y-%m-%d-%H%M.json", time.gmtime()))
    with open(path, "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=2))
    print(f"\n{path}")
    ok = not errors and lost == 0 and mixed == 0 and server.returncode == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
