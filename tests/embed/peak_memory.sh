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

# A Longformer-style encoder up to 8192 tokens: a 256-token window, global
# tokens and BigBird's random keys. Nothing may grow as T x T (at 8192 tokens
# one head's scores alone would be 256 MiB, 25 times the planned memory): the
# peak must stay within the same bound as above at every length, and grow
# linearly, checked on its increments from 2048 to 4096 and 8192 tokens (2x
# for linear growth, 4x for quadratic).
cat > "$work/long_window.tm" <<'SPEC'
model long_window {
  vocab = 64
  d_model = 64
  max_seq = 8192
  position = learned
  encoder {
    layers = 2
    heads = 4
    mask = padding + sliding_window(size = 256) + global(tokens = [0, 1]) + random(per_row = 2, seed = 3)
  }
}
SPEC
"$tmc" compile "$work/long_window.tm" -o "$work/long_window"
"$tmc" init-weights "$work/long_window.tm" -o "$work/long_window.safetensors" --seed 1
check=$("$tmc" check "$work/long_window.tm" --json)
weights=$(field "$check" weight_bytes)
declare -A peak_at
for count in 2048 4096 8192; do
  tokens=$(python3 -c "import sys; print(','.join(str(i * 7 % 64) for i in range(int(sys.argv[1]))))" "$count")
  json=$("$work/long_window" --weights "$work/long_window.safetensors" --tokens "$tokens" \
           --threads 2 --json --bench --bench-runs 1 | tail -1)
  peak=$(field "$json" peak_rss_bytes)
  arena=$(field "$json" arena_bytes) # planned for max_seq tokens
  peak_at[$count]=$peak
  output=$((count * 64 * 4))
  bound=$(( (weights + arena + output) * 11 / 10 + allowance ))
  echo "long_window, $count tokens: peak RSS $peak bytes; weights $weights + arena $arena" \
       "+ output $output, bound $bound"
  if [ "$peak" -gt "$bound" ]; then
    echo "FAIL: peak RSS exceeds the bound by $((peak - bound)) bytes at $count tokens" >&2
    exit 1
  fi
done
first=$((peak_at[4096] - peak_at[2048])) second=$((peak_at[8192] - peak_at[4096]))
echo "long_window: peak RSS grows by $first bytes from 2048 to 4096 tokens, $second to 8192"
if [ $((second * 10)) -gt $((first * 25)) ]; then
  echo "FAIL: peak RSS grows faster than linearly in T (increments $first, then $second)" >&2
  exit 1
fi
