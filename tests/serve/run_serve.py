#!/usr/bin/env python3
"""`MODEL serve` over loopback with real HTTP clients (http.client, urllib, curl).

Usage: run_serve.py TMC WORKDIR

Compiles a decoder (examples/gpt-mini.tm, GPT-2's tokenizer), an encoder
(examples/encoder-tiny.tm), a classifier and an encoder-decoder, starts each
one's server on a free port and checks:
  - 32 concurrent clients (greedy and sampled, streamed and not, text and
    token-id prompts of different lengths): every response equals the same
    request sent alone, and greedy ones equal the executable's own
    single-sequence run (`--tokens ... --max-new N`);
  - stop strings and stop_token_ids, the usage counts;
  - logprobs (whole and streamed) and echo's prompt scores against the
    log-softmax of the executable's own --output logits; presence and
    frequency penalties against the executable under the same flags and
    against its logits less the penalties;
  - malformed JSON, wrong types, unknown routes and methods, an oversize
    body, prompts past max_seq, bad token ids, max_tokens past max_seq, a
    field the route does not read: each a 4xx JSON error naming the field,
    and the server keeps serving;
  - a client that disconnects mid-stream frees its slot (/metrics);
  - /health and /metrics (Prometheus text);
  - embeddings of a batch equal each input alone and the executable's
    --output rows (mean-pooled here), base64 ones the floats, classify
    equals the executable;
  - SIGTERM: the request in flight is answered, then the server exits 0;
  - an encoder-decoder's completions, each from its own source, together
    equal to alone and to the executable; a missing or bad source is a 400;
  - a vocabulary padded past the tokenizer's: its ids add no text to an
    echoed prompt, are named token_id:ID in logprobs, and are no 5xx.
Bounded in count and time: a few hundred requests, about a minute.
"""

import base64
import concurrent.futures
import http.client
import json
import math
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOKENIZER = os.path.join(ROOT, "examples/tokenizers/gpt2")
FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print("FAIL:", message, flush=True)


def run(args, **kw):
    result = subprocess.run(args, capture_output=True, text=True, **kw)
    if result.returncode != 0:
        sys.exit("command failed: %s\n%s%s" % (" ".join(args), result.stdout, result.stderr))
    return result.stdout


def build(tmc, work, spec, name):
    exe = os.path.join(work, name)
    weights = exe + ".safetensors"
    run([tmc, "compile", spec, "--target", "x86-64-avx2", "-o", exe])
    run([tmc, "init-weights", spec, "-o", weights])
    return exe, weights


class Server:
    def __init__(self, exe, weights, *extra):
        self.proc = subprocess.Popen([exe, "serve", "--weights", weights, "--port", "0", *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if "http://127.0.0.1:" not in line:
            sys.exit("server did not start: %r %s" % (line, self.proc.stderr.read()))
        self.port = int(line.split("http://127.0.0.1:")[1].split()[0])

    def request(self, method, path, body=None, raw=None, headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        conn.request(method, path, body=data, headers=headers or {})
        response = conn.getresponse()
        text = response.read().decode()
        conn.close()
        return response.status, response.getheader("Content-Type"), text

    def post(self, path, body):
        status, _, text = self.request("POST", path, body)
        return status, json.loads(text)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        out, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, out, err


def stream_events(port, body):
    """The events of a streamed completion (server-sent events), up to [DONE]."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("POST", "/v1/completions", body=json.dumps(dict(body, stream=True)))
    response = conn.getresponse()
    assert response.status == 200, response.status
    assert response.getheader("Content-Type") == "text/event-stream"
    events, done = [], False
    for line in response:
        line = line.decode().rstrip("\n")
        if not line.startswith("data: "):
            continue
        payload = line[len("data: "):]
        if payload == "[DONE]":
            done = True
            break
        events.append(json.loads(payload))
    conn.close()
    assert done, "no [DONE] event"
    return events


def stream_completion(port, body):
    """The tokens and text of a streamed completion, read as server-sent events."""
    tokens, text, finish, most = [], "", None, 0
    for event in stream_events(port, body):
        choice = event["choices"][0]
        tokens += choice["token_ids"]
        most = max(most, len(choice["token_ids"]))
        text += choice["text"]
        finish = choice["finish_reason"] or finish
    assert most <= 1, "an event carried %d tokens: a stream sends one per token" % most
    return {"tokens": tokens, "text": text, "finish": finish}


def completion(server, body):
    if body.get("stream"):
        return stream_completion(server.port, body)
    status, reply = server.post("/v1/completions", body)
    assert status == 200, (status, reply)
    choice = reply["choices"][0]
    return {"tokens": choice["token_ids"], "text": choice["text"],
            "finish": choice["finish_reason"]}


def metric(server, name):
    _, _, text = server.request("GET", "/metrics")
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def decoder_tests(tmc, work):
    exe, weights = build(tmc, work, os.path.join(ROOT, "examples/gpt-mini.tm"), "gpt")
    server = Server(exe, weights, "--tokenizer", TOKENIZER, "--max-batch", "16")
    # 32 requests of many shapes; each alone first, then all at once.
    requests = []
    for i in range(32):
        body = {"max_tokens": 4 + (i * 5) % 13, "seed": 1000 + i}
        body["prompt"] = ("Once upon a time number %d, there" % i if i % 3 == 0 else
                          [(i * 37 + k * 11) % 50257 for k in range(1 + (i * 7) % 40)])
        body["temperature"] = 0 if i % 2 == 0 else 0.9
        if i % 4 == 1:
            body["top_k"] = 20
        if i % 4 == 3:
            body["top_p"] = 0.8
        if i % 5 == 0:
            body["stream"] = True
        requests.append(body)
    alone = [completion(server, body) for body in requests]
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        together = list(pool.map(lambda body: completion(server, body), requests))
    for i, (a, t) in enumerate(zip(alone, together)):
        check(a == t, "request %d: concurrent response %s differs from alone %s" % (i, t, a))
        check(len(a["tokens"]) == requests[i]["max_tokens"] and a["finish"] == "length",
              "request %d: %d tokens, finish %s" % (i, len(a["tokens"]), a["finish"]))
    occupancy = metric(server, "tmc_batch_occupancy_sum")
    steps = metric(server, "tmc_batch_occupancy_count")
    check(occupancy and steps and occupancy / steps > 1.5,
          "concurrent requests were not batched: %s sequences over %s steps" % (occupancy, steps))
    # Greedy token-id requests against the executable's own single-sequence run.
    for i in (2, 4, 8):
        body = requests[i]
        out = run([exe, "--weights", weights, "--tokens", ",".join(map(str, body["prompt"])),
                   "--max-new", str(body["max_tokens"]), "--json"])
        check(json.loads(out)["generated"] == alone[i]["tokens"],
              "request %d: server %s, executable %s" % (i, alone[i]["tokens"], out))
    # logprobs: each token's log-softmax against the executable's logits for
    # the same greedy run (its --output holds every position's), the 3
    # likeliest beside it; streamed, the same numbers a token at a time.
    body = dict(requests[2], logprobs=3)
    status, reply = server.post("/v1/completions", body)
    logprobs = reply["choices"][0]["logprobs"] if status == 200 else None
    path = os.path.join(work, "logits.npy")
    run([exe, "--weights", weights, "--tokens", ",".join(map(str, body["prompt"])),
         "--max-new", str(body["max_tokens"]), "--output", path])
    shape, values = read_npy(path)
    vocab, prompt = shape[2], len(body["prompt"])
    worst = 0.0
    for k, token in enumerate(alone[2]["tokens"] if logprobs else []):
        row = values[(prompt - 1 + k) * vocab:(prompt + k) * vocab]
        peak = max(row)
        log_z = peak + math.log(sum(math.exp(v - peak) for v in row))
        # Keyed by the tokens' text: compared by value (the greedy token is
        # the likeliest, so three values).
        likeliest = sorted(range(vocab), key=lambda i: (-row[i], i))[:3]
        want = sorted(row[i] - log_z for i in set(likeliest + [token]))
        got = sorted(logprobs["top_logprobs"][k].values())
        check(len(got) == len(want), "logprobs of token %d: %s, want %s" % (k, got, want))
        worst = max([worst, abs(logprobs["token_logprobs"][k] - (row[token] - log_z))] +
                    [abs(a - b) for a, b in zip(got, want)])
    check(logprobs is not None and len(logprobs["token_logprobs"]) == len(alone[2]["tokens"]) and
          "".join(logprobs["tokens"]) == alone[2]["text"] and
          logprobs["text_offset"][0] == 0 and worst < 1e-5,
          "logprobs: %s (largest difference %g)" % (str(logprobs)[:300], worst))
    streamed = stream_events(server.port, dict(body, stream=True))
    pieces = [event["choices"][0]["logprobs"] for event in streamed]
    check(logprobs is not None and
          sum((piece["token_logprobs"] for piece in pieces), []) == logprobs["token_logprobs"],
          "streamed logprobs differ: %s" % str(pieces)[:300])
    # echo: the prompt scored too. With max_tokens 0 (a prompt given as
    # lm-evaluation-harness sends one: a list holding a list of ids), each
    # prompt token after the first has the log-softmax of the row before it
    # in the executable's prefill logits (--output without --max-new); with
    # tokens generated, their part equals the reply without echo, and the
    # text is the prompt's decoding followed by the completion's.
    prompt_ids = requests[2]["prompt"]
    status, reply = server.post("/v1/completions", {"prompt": [prompt_ids], "max_tokens": 0,
                                                    "echo": True, "logprobs": 2})
    scored = reply["choices"][0]["logprobs"] if status == 200 else None
    path = os.path.join(work, "prefill.npy")
    run([exe, "--weights", weights, "--tokens", ",".join(map(str, prompt_ids)), "--output", path])
    _, values = read_npy(path)
    worst = 0.0
    for i in range(1, len(prompt_ids) if scored else 0):
        row = values[(i - 1) * vocab:i * vocab]
        peak = max(row)
        log_z = peak + math.log(sum(math.exp(v - peak) for v in row))
        worst = max(worst, abs(scored["token_logprobs"][i] - (row[prompt_ids[i]] - log_z)))
    check(scored is not None and len(scored["token_logprobs"]) == len(prompt_ids) and
          scored["token_logprobs"][0] is None and scored["top_logprobs"][0] is None and
          worst < 1e-5 and reply["choices"][0]["token_ids"] == [],
          "echo, max_tokens 0: %s (largest difference %g)" % (str(reply)[:300], worst))
    status, reply = server.post("/v1/completions", dict(requests[2], logprobs=3, echo=True))
    echoed = reply["choices"][0] if status == 200 else None
    n = len(prompt_ids)
    check(echoed is not None and scored is not None and logprobs is not None and
          echoed["logprobs"]["token_logprobs"][:n] == scored["token_logprobs"] and
          echoed["logprobs"]["token_logprobs"][n:] == logprobs["token_logprobs"] and
          echoed["text"].endswith(alone[2]["text"]) and
          echoed["logprobs"]["text_offset"][n] == len(echoed["text"]) - len(alone[2]["text"]),
          "echo with tokens: %s" % str(reply)[:300])
    # Penalties: a greedy request with presence and frequency penalties gives
    # the executable's tokens under the same flags, each token the argmax of
    # its step's logits (the executable's --output) less the penalties of
    # the tokens generated before it; and not the unpenalized tokens (this
    # model repeats none in 12 greedy steps: a presence penalty of -2 makes
    # it repeat, and a frequency penalty of 0.7 ends each repetition).
    ids = ",".join(map(str, requests[2]["prompt"]))
    body = {"prompt": requests[2]["prompt"], "max_tokens": 12, "temperature": 0}
    plain = completion(server, body)
    served = completion(server, dict(body, presence_penalty=-2, frequency_penalty=0.7))
    path = os.path.join(work, "penalized.npy")
    out = run([exe, "--weights", weights, "--tokens", ids, "--max-new", "12", "--json",
               "--presence-penalty", "-2", "--frequency-penalty", "0.7", "--output", path])
    check(json.loads(out)["generated"] == served["tokens"] != plain["tokens"],
          "penalties: server %s, executable %s, unpenalized %s" % (served["tokens"], out,
                                                                   plain["tokens"]))
    shape, values = read_npy(path)
    counts = {}
    for k, token in enumerate(served["tokens"]):
        row = values[(prompt - 1 + k) * vocab:(prompt + k) * vocab]
        penalized = [v - (-2 + 0.7 * counts[i] if i in counts else 0) for i, v in enumerate(row)]
        best = max(range(vocab), key=lambda i: (penalized[i], -i))
        check(best == token, "penalized step %d: token %d, the argmax is %d" % (k, token, best))
        counts[token] = counts.get(token, 0) + 1
    # Text: the completion's text is the tokenizer's decoding of its tokens.
    first = completion(server, {"prompt": "The", "max_tokens": 12, "temperature": 0})
    # A stop string cut from the text: the text before it.
    cut = first["text"][len(first["text"]) // 2:][:3]
    if cut:
        stopped = completion(server, {"prompt": "The", "max_tokens": 12, "temperature": 0,
                                      "stop": [cut]})
        check(stopped["finish"] == "stop" and stopped["text"] == first["text"][:first["text"].find(cut)],
              "stop %r: %s from %s" % (cut, stopped, first))
        streamed = completion(server, {"prompt": "The", "max_tokens": 12, "temperature": 0,
                                       "stop": cut, "stream": True})
        check(streamed["text"] == stopped["text"] and streamed["finish"] == "stop",
              "streamed stop %r: %s" % (cut, streamed))
    stop_id = first["tokens"][3]
    stopped = completion(server, {"prompt": "The", "max_tokens": 12, "temperature": 0,
                                  "stop_token_ids": [stop_id]})
    check(stopped["tokens"] == first["tokens"][:first["tokens"].index(stop_id) + 1] and
          stopped["finish"] == "stop", "stop_token_ids: %s from %s" % (stopped, first))
    status, reply = server.post("/v1/completions", {"prompt": [1, 2, 3], "max_tokens": 2})
    check(reply.get("usage") == {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
          "usage: %s" % reply)

    # Bad requests: a 4xx JSON error naming the field, and the server goes on.
    bad = [
        ("POST", "/v1/completions", "{\"prompt\": [1, 2", 400, None),
        ("POST", "/v1/completions", "[1, 2]", 400, None),
        ("POST", "/v1/completions", json.dumps({"max_tokens": 3}), 400, "prompt"),
        ("POST", "/v1/completions", json.dumps({"prompt": 7}), 400, "prompt"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1, 50257]}), 400, "prompt"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1, -1]}), 400, "prompt"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "max_tokens": "4"}), 400,
         "max_tokens"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1] * 250, "max_tokens": 7}), 400,
         "max_tokens"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1] * 257}), 400, "prompt"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "temperature": -1}), 400,
         "temperature"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "top_p": 0}), 400, "top_p"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "stream": "yes"}), 400, "stream"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "stop": 5}), 400, "stop"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "n": 2}), 400, "n"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "seed": 1.5}), 400, "seed"),
        # A field the server would ignore is refused: a typo, and OpenAI's
        # fields it does not implement unless at the value that means "off".
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "max_token": 4}), 400,
         "max_token"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "logprobs": 6}), 400, "logprobs"),
        ("POST", "/v1/completions", json.dumps({"prompt": ["a", "b"]}), 400, "prompt"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "echo": True, "stream": True}),
         400, "echo"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "max_tokens": 0}), 400,
         "max_tokens"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "presence_penalty": 2.5}), 400,
         "presence_penalty"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "frequency_penalty": "x"}), 400,
         "frequency_penalty"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "logit_bias": {"5": 100}}), 400,
         "logit_bias"),
        ("POST", "/v1/completions", json.dumps({"prompt": [1], "stream_options": 1}), 400,
         "stream_options"),
        ("POST", "/v1/completions", "{\"prompt\": \"" + "a" * (2 << 20) + "\"}", 413, None),
        ("GET", "/v1/completions", None, 405, None),
        ("POST", "/health", "{}", 405, None),
        ("GET", "/v2/nothing", None, 404, None),
        ("POST", "/v1/embeddings", json.dumps({"input": [1, 2]}), 404, None),
    ]
    for method, path, raw, want, param in bad:
        try:
            status, ctype, text = server.request(method, path, raw=raw)
        except (ConnectionError, http.client.HTTPException) as e:
            check(False, "%s %s: %s" % (method, path, e))
            continue
        try:
            error = json.loads(text)["error"]
        except (ValueError, KeyError):
            error = None
        check(status == want and ctype == "application/json" and error and error["message"],
              "%s %s %r: %s %s" % (method, path, (raw or "")[:60], status, text[:200]))
        if param:
            check(error and error.get("param") == param, "%s: param %s" % (text[:200], param))
    # A refused value is quoted cut short, not echoed whole.
    status, _, text = server.request("POST", "/v1/completions",
                                     raw=json.dumps({"prompt": [1], "suffix": "a" * 5000}))
    message = json.loads(text)["error"]["message"] if status == 400 else ""
    check(message.startswith("suffix \"aaa") and "..." in message and len(message) < 200,
          "a long refused value: %s %s" % (status, text[:300]))
    # Still serving, with the same answer.
    check(completion(server, requests[2]) == alone[2], "the server changed after bad requests")
    # The unimplemented fields at their "off" values, as clients such as
    # LangChain send them, change nothing.
    defaults = dict(requests[2], model="anything", user="u", n=1, logprobs=None, echo=False,
                    best_of=1, suffix=None, presence_penalty=0, frequency_penalty=0.0,
                    logit_bias={}, stream_options={"include_usage": True})
    check(completion(server, defaults) == alone[2], "the fields at their defaults changed it")

    # A client that leaves mid-stream frees its slot. The engine counts a
    # finished job's slot free at the end of its step, after the reply may
    # have gone out: wait for the last request's slot first.
    deadline = time.time() + 10
    while time.time() < deadline and (metric(server, "tmc_slots_active") or 0) > 0:
        time.sleep(0.05)
    before = metric(server, "tmc_slots_active")
    sock = socket.create_connection(("127.0.0.1", server.port))
    body = json.dumps({"prompt": [1, 2], "max_tokens": 250, "stream": True, "temperature": 0})
    sock.sendall(("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
                  % (len(body), body)).encode())
    received = b""
    while b"data: " not in received:
        chunk = sock.recv(4096)
        if not chunk:
            break
        received += chunk
    check(b"data: " in received, "no event before the disconnect")
    sock.close()
    deadline = time.time() + 10
    while time.time() < deadline and (metric(server, "tmc_slots_active") or 0) > 0:
        time.sleep(0.05)
    check(metric(server, "tmc_slots_active") == 0 and before == 0,
          "the disconnected stream kept its slot")
    cancelled = [l for l in server.request("GET", "/metrics")[2].splitlines()
                 if l.startswith("tmc_jobs_total{result=\"cancelled\"}")]
    check(cancelled and float(cancelled[0].split()[1]) >= 1, "no cancelled job: %s" % cancelled)

    # curl, a client of its own.
    out = subprocess.run(["curl", "-sS", "-X", "POST", "http://127.0.0.1:%d/v1/completions"
                          % server.port, "-H", "Content-Type: application/json", "-d",
                          json.dumps(requests[4])], capture_output=True, text=True)
    check(out.returncode == 0 and json.loads(out.stdout)["choices"][0]["token_ids"] ==
          alone[4]["tokens"], "curl: %s %s" % (out.stdout[:200], out.stderr))
    status, ctype, health = server.request("GET", "/health")
    check(status == 200 and json.loads(health)["status"] == "ok", "health: %s" % health)
    status, ctype, text = server.request("GET", "/metrics")
    check(status == 200 and ctype.startswith("text/plain") and
          "# TYPE tmc_request_duration_seconds histogram" in text and
          'tmc_requests_total{route="completions",status="4xx"}' in text,
          "metrics: %s" % text[:300])

    # SIGTERM while a request runs: it is answered, then the server exits 0.
    result = {}
    def long_request():
        result["reply"] = completion(server, {"prompt": [3, 4], "max_tokens": 200,
                                              "temperature": 0})
    thread = threading.Thread(target=long_request)
    thread.start()
    deadline = time.time() + 10
    while time.time() < deadline and (metric(server, "tmc_slots_active") or 0) == 0:
        time.sleep(0.01)
    code, out, err = server.stop()
    thread.join()
    check(code == 0 and "drained" in out, "SIGTERM: exit %s, %s %s" % (code, out, err))
    check(len(result.get("reply", {}).get("tokens", [])) == 200,
          "the request in flight at SIGTERM was not answered in full: %s" % result)


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    header_len = struct.unpack("<H", data[8:10])[0]
    header = eval(data[10:10 + header_len].decode())  # the .npy header is a Python literal
    count = 1
    for n in header["shape"]:
        count *= n
    values = struct.unpack("<%df" % count, data[10 + header_len:10 + header_len + 4 * count])
    return header["shape"], list(values)


def encoder_tests(tmc, work):
    exe, weights = build(tmc, work, os.path.join(ROOT, "examples/encoder-tiny.tm"), "enc")
    server = Server(exe, weights, "--max-batch", "8")
    inputs = [[(i * 13 + k * 7) % 100 for k in range(2 + i * 5)] for i in range(6)]
    status, batch = server.post("/v1/embeddings", {"input": inputs, "pooling": "none"})
    check(status == 200 and len(batch["data"]) == 6, "embeddings: %s %s" % (status, batch))
    for i, ids in enumerate(inputs):
        status, one = server.post("/v1/embeddings", {"input": ids, "pooling": "none"})
        check(one["data"][0]["embedding"] == batch["data"][i]["embedding"],
              "input %d: batched rows differ from alone" % i)
        path = os.path.join(work, "enc-%d.npy" % i)
        run([exe, "--weights", weights, "--tokens", ",".join(map(str, ids)), "--output", path])
        shape, values = read_npy(path)
        width = shape[2]
        rows = [values[r * width:(r + 1) * width] for r in range(shape[1])]
        served = [[float(v) for v in row] for row in batch["data"][i]["embedding"]]
        check(served == [[float(v) for v in row] for row in rows],
              "input %d: server rows differ from the executable's" % i)
        status, pooled = server.post("/v1/embeddings", {"input": ids})
        mean = [sum(row[c] for row in rows) / len(rows) for c in range(width)]
        check(max(abs(a - b) for a, b in zip(pooled["data"][0]["embedding"], mean)) < 1e-6,
              "input %d: mean pooling" % i)
    # OpenAI's encoding_format "base64": the same floats, little-endian bytes.
    ids = inputs[1]
    status, floats = server.post("/v1/embeddings", {"input": ids, "encoding_format": "float"})
    status64, packed = server.post("/v1/embeddings", {"input": ids, "encoding_format": "base64",
                                                       "dimensions": len(floats["data"][0]["embedding"])})
    raw = base64.b64decode(packed["data"][0]["embedding"]) if status64 == 200 else b""
    check(status == 200 and status64 == 200 and
          list(struct.unpack("<%df" % (len(raw) // 4), raw)) == floats["data"][0]["embedding"],
          "base64 embedding: %s %s" % (status64, str(packed)[:200]))
    for field, value in (("encoding_format", "int8"), ("dimensions", 3), ("pooling", "max"),
                         ("input_type", "query")):
        status, reply = server.post("/v1/embeddings", {"input": ids, field: value})
        check(status == 400 and reply["error"]["param"] == field, "%s: %s" % (field, reply))
    status, reply = server.post("/v1/embeddings", {"input": [[1, 2], [3, 100]]})
    check(status == 400 and reply["error"]["param"] == "input[1]", "bad id: %s" % reply)
    status, reply = server.post("/v1/embeddings", {"input": [1] * 65})
    check(status == 400 and reply["error"]["param"] == "input", "too long: %s" % reply)
    status, reply = server.post("/v1/embeddings", {"input": "text"})
    check(status == 400 and "--tokenizer" in reply["error"]["message"], "text: %s" % reply)
    status, reply = server.post("/v1/completions", {"prompt": [1]})
    check(status == 404 and "/v1/embeddings" in reply["error"]["message"], "route: %s" % reply)
    code, _, err = server.stop()
    check(code == 0, "encoder server exit %s: %s" % (code, err[-3000:]))

    spec = os.path.join(ROOT, "tests/e2e/specs/encoder-segments-classifier.tm")
    exe, weights = build(tmc, work, spec, "cls")
    server = Server(exe, weights)
    ids = [[1, 2, 3, 4], [5, 6, 7, 8, 9, 10, 11]]
    status, reply = server.post("/v1/classify", {"input": ids})
    check(status == 200 and len(reply["data"]) == 2, "classify: %s" % reply)
    for i, tokens in enumerate(ids):
        path = os.path.join(work, "cls-%d.npy" % i)
        run([exe, "--weights", weights, "--tokens", ",".join(map(str, tokens)), "--output", path])
        _, values = read_npy(path)
        check(reply["data"][i]["logits"] == [float(v) for v in values] and
              reply["data"][i]["label"] == values.index(max(values)),
              "classify %d: %s vs %s" % (i, reply["data"][i], values))
    status, reply = server.post("/v1/classify", {"input": ids, "pooling": "cls"})
    check(status == 400 and reply["error"]["param"] == "pooling", "classify pooling: %s" % reply)
    code, _, err = server.stop()
    check(code == 0, "classifier server exit %s: %s" % (code, err[-3000:]))


def encoder_decoder_tests(tmc, work):
    """Completions that decode from a source each: admitted together, their
    sources are encoded in one call; every answer equals the request alone,
    and greedy ones the executable's --source-tokens run."""
    exe, weights = build(tmc, work, os.path.join(ROOT, "tests/e2e/specs/encoder-decoder.tm"),
                         "encdec")
    server = Server(exe, weights, "--max-batch", "4")
    bodies = [{"prompt": [1 + i % 3], "source": [(7 * i + k) % 40 for k in range(2 + 3 * i)],
               "max_tokens": 5, "seed": 11 + i, "temperature": 0 if i % 2 else 1}
              for i in range(6)]
    alone = [completion(server, body) for body in bodies]
    together = list(concurrent.futures.ThreadPoolExecutor(len(bodies)).map(lambda b: completion(server, b), bodies))
    for i, body in enumerate(bodies):
        check(together[i] == alone[i], "encdec %d together %s, alone %s" % (i, together[i], alone[i]))
        if body["temperature"] == 0:
            out = json.loads(run([exe, "--weights", weights, "--json", "--max-new", "5",
                                  "--source-tokens", ",".join(map(str, body["source"])),
                                  "--tokens", ",".join(map(str, body["prompt"]))]))
            check(out["generated"] == alone[i]["tokens"],
                  "encdec %d: %s, the executable %s" % (i, alone[i]["tokens"], out["generated"]))
    status, reply = server.post("/v1/completions", {"prompt": [1]})
    check(status == 400 and reply["error"]["param"] == "source", "no source: %s" % reply)
    status, reply = server.post("/v1/completions", {"prompt": [1], "source": [3, 40]})
    check(status == 400 and reply["error"]["param"] == "source", "bad source: %s" % reply)
    code, _, err = server.stop()
    check(code == 0, "encoder-decoder server exit %s: %s" % (code, err[-3000:]))


PADDED_SPEC = """model padded {
  vocab = 50304
  d_model = 16
  max_seq = 16
  output = lm_head(tied = true)
  decoder { layers = 1; heads = 2; d_ff = 32 }
}
"""


def padded_vocabulary_tests(tmc, work):
    """A vocabulary padded past its tokenizer's (GPT-2's 50257 ids to 50304,
    as nanoGPT's): ids 50257.. have no text; a reply leaves them out of it
    and keeps them in its ids, never a 5xx."""
    spec = os.path.join(work, "padded.tm")
    with open(spec, "w") as f:
        f.write(PADDED_SPEC)
    exe, weights = build(tmc, work, spec, "padded")
    server = Server(exe, weights, "--tokenizer", TOKENIZER)
    the = 464  # "The"
    status, reply = server.post("/v1/completions", {"prompt": [the, 50300, the], "max_tokens": 2,
                                                    "echo": True, "logprobs": 1,
                                                    "temperature": 0})
    check(status == 200, "padded ids in an echoed prompt: %s %s" % (status, reply))
    if status == 200:
        choice = reply["choices"][0]
        check(choice["text"].startswith("TheThe"), "padded: echoed text %r" % choice["text"])
        tokens = choice["logprobs"]["tokens"]
        check(tokens[:3] == ["The", "token_id:50300", "The"], "padded: logprobs tokens %r" % tokens)
        check(choice["logprobs"]["text_offset"][:3] == [0, 3, 3],
              "padded: offsets %r" % choice["logprobs"]["text_offset"])
    server.stop()


def main():
    tmc, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    start = time.time()
    padded_vocabulary_tests(tmc, work)
    decoder_tests(tmc, work)
    encoder_tests(tmc, work)
    encoder_decoder_tests(tmc, work)
    print("serve tests: %d failure(s) in %.1f s" % (len(FAILURES), time.time() - start))
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
