#!/usr/bin/env bash
# peak_memory.sh TMC SOURCE_DIR WORK_DIR
#
# The executable's peak RSS stays within what the model plans for: its f32
# weights and KV cache as `tmc check` counts them (so a second copy of the
# weights, e.g. raw ones kept beside their packed GEMM panels, shows), the
# activation arena the executable reports and the output the user asked for,
# plus 10%, plus a fixed allowance for the process itself.
set -euo pipefail
tmc=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"

# run SPEC TOKENS MAX_NEW -> the --json --bench line of the compiled SPEC
run() {
  local name
  name=$(basename "$1" .tm)
  "$tmc" compile "$src/$1" -o "$work/$name"
  "$tmc" init-weights "$src/$1" -o "$work/$name.safetensors" --seed 1
  "$work/$name" --weights "$work/$name.safetensors" --tokens "$2" --max-new "$3" \
    --threads 2 --json --bench --bench-runs 2
}

field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

# The allowance: a model with 300 KB of weights peaks at the process's own
# footprint, measured here rather than assumed: 4.1 MB on x86-64 Debian 12
# (the executable's text, libstdc++ and libc, Halide's runtime and the stacks
# of its worker threads). 16 MiB leaves room for a larger libc or more cores;
# the baseline is checked against it so the assumption cannot rot silently.
allowance=$((16 * 1024 * 1024))
tiny=$(run examples/encoder-tiny.tm 1,2,3,4,5,6,7,8 0 | tail -1)
baseline=$(field "$tiny" peak_rss_bytes)
echo "baseline (encoder-tiny): peak RSS $baseline bytes"
if [ "$baseline" -gt "$allowance" ]; then
  echo "FAIL: the process alone takes $baseline bytes, more than the $allowance allowance" >&2
  exit 1
fi

# gpt-mini: 50257-token vocabulary, 55 MB of f32 weights (two vocab-sized
# tables, one packed for the LM head GEMM). 16 prompt tokens, 8 new ones.
tokens=464,3290,318,257,1263,1110,284,467,2422,13,383,3290,318,262,1266,13
json=$(run examples/gpt-mini.tm "$tokens" 8 | tail -1)
check=$("$tmc" check "$src/examples/gpt-mini.tm" --json)
peak=$(field "$json" peak_rss_bytes)
weights=$(field "$check" weight_bytes)
cache=$(field "$check" kv_cache_bytes)
arena=$(field "$json" arena_bytes)
output=$((16 * 50257 * 4)) # the prompt's logits, every row (kept for --output)
bound=$(( (weights + cache + arena + output) * 11 / 10 + allowance ))
echo "gpt-mini: peak RSS $peak bytes; weights $weights + cache $cache + arena $arena" \
     "+ output $output, bound $bound"
if [ "$peak" -gt "$bound" ]; then
  echo "FAIL: peak RSS exceeds the bound by $((peak - bound)) bytes" >&2
  exit 1
fi
