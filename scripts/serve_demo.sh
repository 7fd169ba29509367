#!/usr/bin/env bash
# serve_demo.sh MODEL WEIGHTS TOKENIZER: `MODEL serve` as a user meets it. Starts the server on
# a free loopback port, asks for a completion with curl (whole, then streamed as server-sent
# events), shows /health and a few /metrics lines, then stops it with SIGTERM (it drains and
# exits 0).
set -euo pipefail
model=$1 weights=$2 tokenizer=$3
log=$(mktemp)
"$model" serve --weights "$weights" --tokenizer "$tokenizer" --port 0 > "$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 100); do
  grep -q "http://" "$log" && break
  sleep 0.1
done
head -1 "$log"
url=$(grep -o "http://[0-9.]*:[0-9]*" "$log" | head -1)
set -x
curl -sS "$url/v1/completions" -d '{"prompt": "And the earth was", "max_tokens": 16, "temperature": 0}'
echo
curl -sS -N "$url/v1/completions" -d '{"prompt": "Thou shalt", "max_tokens": 6, "stream": true, "seed": 1}'
curl -sS "$url/health"
echo
curl -sS "$url/metrics" | grep -E "^tmc_(generated_tokens_total|slots|jobs_total\{result=\"done\"\}) "
set +x
kill -TERM "$pid"
wait "$pid"
echo "server exited $?"
trap 'rm -f "$log"' EXIT
