#!/usr/bin/env bash
# bench/kernels/run.sh - tmc's kernels against peers: GEMMs against oneDNN's
# sgemm, fused attention against an unfused version.
#
# One command: builds the kernel generator in a tmc build dir, AOT-compiles
# the GEMM kernels (pack + GEMM per shape and schedule variant), builds the
# timing harness against oneDNN (Debian libdnnl-dev, installed here if
# missing) and prints GFLOP/s and tmc/oneDNN ratios at 1 and 2 threads; then
# the same for GPT-2 small's fused causal attention (schedule variants) and
# an unfused one (QK^T GEMM, softmax, PV GEMM through [12, T, T] scores) at
# T = 128 and 512, printing milliseconds and unfused/fused speedups.
#
# Usage: bench/kernels/run.sh [--build-dir DIR] [--target host|x86-64-avx2|x86-64-avx512]
#                             [--quick] [--no-build] [--boost] [--only gemm|attention]
#                             [--shapes gpt2|narrow]
#   --build-dir  a tmc CMake build dir (default: $REPO/build-bench; configured if absent)
#   --target     the kernels' target; with x86-64-avx2 oneDNN is limited to AVX2 too
#   --quick      fewer timing rounds (a smoke run, not for the record)
#   --no-build   the generator is already built (the `bench-kernels` CMake target)
#   --boost      run the timing at the highest scheduling priority (root only:
#                a new session whose Linux autogroup gets nice -20), so that
#                other sessions' builds on a shared machine take less of its
#                cores; oneDNN and tmc get the same treatment. Say so with the numbers.
#   --only       run one of the two benches
#   --shapes     the GEMMs: GPT-2 small's and BERT base's (default), or narrow: the
#                small-model sweep, K in {128,256,320,384,512,768} x N in {384,960,
#                1728,32000,50257} at T = 128 and 1 (with --only gemm: 30 layers)
# Not part of the test suite: timings depend on the machine's load.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD_DIR="$REPO/build-bench"
TARGET=host
ROUNDS=15
BUILD=1
BOOST=0
ONLY=
SHAPES=gpt2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) BUILD_DIR="$(realpath -m "$2")"; shift 2 ;;
    --target) TARGET="$2"; shift 2 ;;
    --quick) ROUNDS=3; shift ;;
    --no-build) BUILD=0; shift ;;
    --boost) BOOST=1; shift ;;
    --only) ONLY="$2"; shift 2 ;;
    --shapes) SHAPES="$2"; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if [[ -n "$ONLY" && "$ONLY" != gemm && "$ONLY" != attention ]]; then
  echo "run.sh: --only takes gemm or attention, not '$ONLY'" >&2; exit 2
fi
if [[ "$SHAPES" != gpt2 && "$SHAPES" != narrow ]]; then
  echo "run.sh: --shapes takes gpt2 or narrow, not '$SHAPES'" >&2; exit 2
fi

# oneDNN is the bench's own dependency, not the project's (scripts/setup.sh).
if [[ "$ONLY" != attention ]] && ! dpkg -s libdnnl-dev >/dev/null 2>&1; then
  echo "== installing libdnnl-dev (oneDNN) for the comparison"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libdnnl-dev >/dev/null
fi

if [[ $BUILD == 1 ]]; then
  if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
    echo "== configuring $BUILD_DIR"
    cmake -S "$REPO" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  echo "== building the kernel generator"
  ninja -C "$BUILD_DIR" bench_kernels_gen >/dev/null
fi

WORK="$BUILD_DIR/bench/kernels/work-$TARGET-$SHAPES"
rm -rf "$WORK" && mkdir -p "$WORK"
echo "== AOT-compiling the kernels for $TARGET"
"$BUILD_DIR/bin/bench_kernels_gen" --target "$TARGET" --out "$WORK" ${ONLY:+--only "$ONLY"} \
  --shapes "$SHAPES" \
  > "$WORK/gen.log"
echo "   $(grep -c "^  k" "$WORK/gen.log" || true) GEMM variants," \
  "$(grep -c "^  attention" "$WORK/gen.log" || true) fused attention variants; schedules: $WORK/gen.log"

HALIDE_INCLUDE=/usr/include/halide14
echo "== building the harnesses"
if [[ "$ONLY" != attention ]]; then
  c++ -O2 -std=c++17 -march=native -fopenmp -I"$WORK" -I"$HALIDE_INCLUDE" \
    "$REPO/bench/kernels/Bench.cpp" "$WORK"/tmb_gemm_*.o "$WORK"/tmb_pack_*.o \
    "$WORK/halide_runtime.o" -ldnnl -lpthread -ldl -o "$WORK/bench_kernels"
fi
if [[ "$ONLY" != gemm ]]; then
  c++ -O2 -std=c++17 -march=native -I"$WORK" -I"$HALIDE_INCLUDE" \
    "$REPO/bench/kernels/BenchAttention.cpp" "$WORK"/tmb_attn_*.o "$WORK"/tmb_unfused_*.o \
    "$WORK/halide_runtime.o" -lpthread -ldl -o "$WORK/bench_attention"
fi

# oneDNN's OpenMP workers spin ~15 ms after each call by default, which steals
# a core from whatever runs next; back-to-back calls (oneDNN's own timed
# block) stay within a 20000-iteration spin, so this costs oneDNN nothing.
export GOMP_SPINCOUNT="${GOMP_SPINCOUNT:-20000}"
if [[ "$TARGET" == "x86-64-avx2" ]]; then
  export DNNL_MAX_CPU_ISA=AVX2
fi
run() {
  echo "== running $(basename "$1") (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  if [[ $BOOST == 1 ]]; then
    # nice alone does not help: the scheduler shares the CPUs between
    # autogroups (sessions) first, so the bench gets a session of its own.
    local exe=$1
    shift
    setsid -w bash -c 'echo -20 > /proc/self/autogroup && echo "   (autogroup priority: $(cat /proc/self/autogroup))" && exe=$0 && rounds=$1 && shift && exec "$exe" --rounds "$rounds" "$@"' \
      "$exe" "$ROUNDS" "$@"
  else
    "$@" --rounds "$ROUNDS"
  fi
  echo "== load after: $(cut -d' ' -f1-3 /proc/loadavg)"
}
# One process per thread count: switching Halide's pool between counts in one
# process often left its second thread idle (bench/kernels/README.md).
if [[ "$ONLY" != attention ]]; then
  run "$WORK/bench_kernels" --threads 1
  run "$WORK/bench_kernels" --threads 2
fi
[[ "$ONLY" == gemm ]] || run "$WORK/bench_attention"
