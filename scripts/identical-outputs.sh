#!/usr/bin/env bash
# Records, or compares with a record, what every example and e2e spec prints
# and writes when compiled by a given tmc: the .npy output of a prompt run,
# and for decoders the generated tokens (greedy, and sampled with a seed) and
# the .npy of a generating run. A refactoring that must change no behaviour
# runs `record` on the build before it and `compare` on the build after it:
#
#   scripts/identical-outputs.sh record  /tmp/before   # with the old build/bin/tmc
#   scripts/identical-outputs.sh compare /tmp/before   # with the new one
#
# TMC (default build/bin/tmc) names the compiler. Files are compared byte by
# byte (cmp); any difference, or a spec that compiled before and fails now,
# exits 1 naming it.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-}
record=${2:-}
if [[ ( $mode != record && $mode != compare ) || -z $record ]]; then
  echo "usage: $0 record|compare DIR" >&2
  exit 2
fi
tmc=${TMC:-build/bin/tmc}
[[ -x $tmc ]] || { echo "$0: no compiler at $tmc (build first, or set TMC)" >&2; exit 2; }

out=$record
[[ $mode == compare ]] && out=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$work"; [[ $mode == compare ]] && rm -rf "$out"' EXIT
mkdir -p "$out"
out=$(realpath "$out")

specs=(examples/*.tm examples/kjv/kjv.tm tests/e2e/specs/*.tm)

# Runs the model and keeps what it printed on stdout and wrote to --output.
run_model() { # name exe args...
  local name=$1 exe=$2
  shift 2
  local status=0
  # Run in the work folder with a relative --output, so that what the model
  # prints ("wrote run.npy: ...") is the same whichever folder records.
  (cd "$work" && "$exe" "$@" --output run.npy) >"$out/$name.stdout" 2>"$work/stderr" || status=$?
  if [[ -f $work/run.npy ]]; then mv "$work/run.npy" "$out/$name.npy"; fi
  if [[ $status -ne 0 ]]; then
    echo "exit $status: $(head -c 300 "$work/stderr")" >>"$out/$name.stdout"
  fi
}

for spec in "${specs[@]}"; do
  name=$(echo "${spec%.tm}" | tr '/' '_')
  exe=$work/$name
  if ! "$tmc" compile "$spec" -o "$exe" 2>"$work/stderr"; then
    echo "compile failed: $(head -c 300 "$work/stderr")" >"$out/$name.compile"
    continue
  fi
  if [[ $spec == examples/kjv/kjv.tm ]]; then
    weights=$PWD/examples/kjv/kjv.safetensors
  else
    weights=$work/$name.safetensors
    "$tmc" init-weights "$spec" -o "$weights" --seed 7 >/dev/null
  fi
  # encoder+decoder: takes source tokens; lm_head output: generates.
  kind=$("$tmc" check "$spec" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(("seq2seq " if "encoder" in d and "decoder" in d else "") +
      ("generates" if d["output"].startswith("lm_head") else ""))')
  source=()
  if [[ $kind == seq2seq* ]]; then
    source=(--source-tokens 2,7,1,8,2,8)
  fi
  run_model "$name.prompt" "$exe" --weights "$weights" --tokens 1,2,3,4,5 "${source[@]}"
  if [[ $kind == *generates ]]; then
    run_model "$name.greedy" "$exe" --weights "$weights" --tokens 3,1,4 "${source[@]}" --max-new 8
    run_model "$name.sampled" "$exe" --weights "$weights" --tokens 3,1,4 "${source[@]}" \
      --max-new 8 --temperature 0.9 --top-k 20 --seed 5
  fi
  rm -f "$exe" "$work/$name.safetensors"
done

if [[ $mode == record ]]; then
  echo "recorded $(ls "$out" | wc -l) files for ${#specs[@]} specs in $out"
  exit 0
fi
differ=0
for base in $( (ls "$record"; ls "$out") | sort -u); do
  if ! cmp -s "$record/$base" "$out/$base"; then
    echo "differs: $base" >&2
    differ=1
  fi
done
total=$(ls "$record" | wc -l)
if [[ $differ -ne 0 ]]; then
  echo "identical-outputs: outputs differ from $record" >&2
  exit 1
fi
echo "identical-outputs: all $total files byte-identical to $record (${#specs[@]} specs)"
