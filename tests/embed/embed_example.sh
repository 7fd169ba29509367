#!/usr/bin/env bash
# embed_example.sh TMC SOURCE_DIR WORK_DIR [LINK_FLAG]
#
# What a new user does with examples/embed: compile a spec with --emit=lib,
# build examples/embed/main.c against libmodel.a with the system C compiler
# and nothing else, run it, and get exactly what the standalone executable of
# the same spec prints for the same weights and tokens.
set -euo pipefail
tmc=$1 src=$2 work=$3
# A sanitizer build's library holds instrumented runtime objects: its
# programs link the sanitizer runtime too (-fsanitize=..., else empty).
link_flag=${4:-}
# Under the sanitizers, one ISA (tests/e2e/EndToEndTest.cpp says why): the
# instrumented tmc spent most of this test's 240 s building three variants.
target=()
[ -n "$link_flag" ] && target=(--target x86-64-avx2)
cc=${CC:-cc}
rm -rf "$work"
mkdir -p "$work"

# check SPEC TOKENS MAX_NEW [SOURCE_TOKENS]
check() {
  local spec=$src/$1 tokens=$2 max_new=$3 source=${4:-}
  local dir=$work/$(basename "$1" .tm)
  mkdir -p "$dir"
  "$tmc" compile "$spec" "${target[@]}" --emit=lib -o "$dir/model"
  test -f "$dir/libmodel.a" && test -f "$dir/model.h"
  "$tmc" compile "$spec" "${target[@]}" -o "$dir/exe"
  "$tmc" init-weights "$spec" -o "$dir/w.safetensors" --seed 7
  # The link line examples/embed/README.md gives, with warnings as errors.
  "$cc" -std=c99 -Wall -Wextra -pedantic -Werror "$src/examples/embed/main.c" -I"$dir" \
    "$dir/libmodel.a" $link_flag -lstdc++ -lm -lpthread -ldl -o "$dir/embed"
  if ldd "$dir/embed" | grep -Ei 'llvm|mlir|halide'; then
    echo "FAIL: the embedding program loads a compiler library" >&2
    exit 1
  fi
  local args=(--weights "$dir/w.safetensors" --tokens "$tokens")
  [ "$max_new" -gt 0 ] && args+=(--max-new "$max_new")
  [ -n "$source" ] && args+=(--source-tokens "$source")
  "$dir/exe" "${args[@]}" > "$dir/exe.out"
  "$dir/embed" "$dir/w.safetensors" "$tokens" "$max_new" $source > "$dir/embed.out"
  if ! diff -u "$dir/exe.out" "$dir/embed.out"; then
    echo "FAIL: $1: the embedded model and the executable disagree" >&2
    exit 1
  fi
  echo "ok: $1: $(head -1 "$dir/embed.out")"
  # Batches against sessions, value by value.
  "$cc" -std=c99 -Wall -Wextra -pedantic -Werror "$src/tests/embed/batch_check.c" -I"$dir" \
    "$dir/libmodel.a" $link_flag -lstdc++ -lm -lpthread -ldl -o "$dir/batch_check"
  "$dir/batch_check" "$dir/w.safetensors"
  # Decoders: cached steps against full recomputation, reset reproducibility.
  if [ "$max_new" -gt 0 ]; then
    "$cc" -std=c99 -Wall -Wextra -pedantic -Werror "$src/tests/embed/decode_check.c" -I"$dir" \
      "$dir/libmodel.a" $link_flag -lstdc++ -lm -lpthread -ldl -o "$dir/decode_check"
    "$dir/decode_check" "$dir/w.safetensors" ${source//,/ }
    # Its weights file truncated under it: TMR_ERROR_IO naming the file, no SIGBUS.
    "$cc" -std=c99 -Wall -Wextra -pedantic -Werror "$src/tests/embed/truncate_check.c" -I"$dir" \
      "$dir/libmodel.a" $link_flag -lstdc++ -lm -lpthread -ldl -o "$dir/truncate_check"
    "$dir/truncate_check" "$dir/w.safetensors" "$dir/truncated.safetensors" ${source//,/ }
  fi
}

check tests/e2e/specs/decoder-gpt.tm 3,14,15,9,2 10
check examples/encoder-tiny.tm 1,2,3,4,5 0
check tests/e2e/specs/encoder-decoder.tm 1,2 6 5,6,7,8

# A wrong weight file is refused with the tensor named, not a crash.
dir=$work/decoder-gpt
"$tmc" init-weights "$src/examples/encoder-tiny.tm" -o "$dir/wrong.safetensors" --seed 1
if "$dir/embed" "$dir/wrong.safetensors" 1,2 0 2> "$dir/wrong.err"; then
  echo "FAIL: the wrong weights were accepted" >&2
  exit 1
fi
grep -q "tmr_model_open: the weights do not match the model: .*tensor 'embed.tokens' has shape \[100, 64\], expected \[50, 32\]" "$dir/wrong.err" &&
  grep -q "missing tensor 'decoder.layers.0.self_attn.q.weight'" "$dir/wrong.err" || {
  cat "$dir/wrong.err" >&2
  echo "FAIL: no named error for the wrong weights" >&2
  exit 1
}
echo "ok: wrong weights: $(head -1 "$dir/wrong.err")"
