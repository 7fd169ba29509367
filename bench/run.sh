#!/usr/bin/env bash
# bench/run.sh - `make bench`: tmc against PyTorch, ONNX Runtime and llama.cpp, end to end.
#
# One command: installs the peers where missing (Debian python3-torch, python3-onnx,
# OpenBLAS and jemalloc; npm onnxruntime-node and node-llama-cpp's CPU build into
# bench/peers/node_modules), builds tmc, then runs bench/e2e/run.py, which
# compiles GPT-2 small, BERT base and the Transformer base with tmc, exports the
# same seeded weights to ONNX and GGUF, checks every peer's output against tmc's
# and times them all, interleaved, at 1 and 2 threads. Results:
# bench/results/latest.{json,md,svg} and the Benchmarks table of README.md.
#
# Usage: bench/run.sh [--build-dir DIR] [--boost] [run.py options: --rounds R --runs K ...]
#   --boost  run the timing at the highest scheduling priority (root: a session
#            whose Linux autogroup gets nice -20) so that other sessions' work on a
#            shared machine takes less of its cores; every engine gets the same.
# Not part of the test suite (tests/bench only checks the plumbing).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="$REPO/build"
BOOST=0
PASS=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) BUILD_DIR="$(realpath -m "$2")"; shift 2 ;;
    --boost) BOOST=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) PASS+=("$1"); shift ;;
  esac
done

# The peers are the benchmark's dependencies, not the project's (scripts/setup.sh).
missing=()
# libopenblas0-pthread: Debian's torch calls libblas.so.3, the reference BLAS
# (~50x slower) unless OpenBLAS provides it. libjemalloc2: torch's allocator
# in the benchmarks (bench/e2e/run.py, peer_env).
for p in python3-torch python3-onnx python3-numpy libopenblas0-pthread libjemalloc2; do
  [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)" == "install ok installed" ]] || missing+=("$p")
done
# Node.js and npm may come from elsewhere than Debian's packages (NodeSource's
# nodejs bundles npm and conflicts with Debian's): ask for the commands.
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "== installing ${missing[*]} (apt)"
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# npm packages, pinned by bench/peers/package-lock.json. --ignore-scripts:
# onnxruntime-node's install script downloads GPU add-ons (and fails offline);
# node-llama-cpp's prebuilt CPU binaries come as a package of their own
# (@node-llama-cpp/linux-x64), so its CUDA/Vulkan optional packages are omitted.
PEERS="$REPO/bench/peers"
if [[ ! -f "$PEERS/node_modules/.package-lock.json" ||
      "$PEERS/package-lock.json" -nt "$PEERS/node_modules/.package-lock.json" ]]; then
  echo "== installing onnxruntime-node and node-llama-cpp (npm) into bench/peers"
  # `npm install --no-save` rather than `npm ci`: npm 11's ci refuses a lock
  # that lists other platforms' optional packages without versions (it says
  # "Missing: @node-llama-cpp/win-x64@ from lock file"); install follows the
  # same lock without rewriting it.
  (cd "$PEERS" && npm install --no-save --ignore-scripts --omit=optional --no-audit --no-fund \
     --loglevel=error)
fi

if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  bash "$REPO/scripts/setup.sh"
  cmake -S "$REPO" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
echo "== building tmc"
ninja -C "$BUILD_DIR" tmc >/dev/null

CMD=(/usr/bin/python3 "$REPO/bench/e2e/run.py" --build-dir "$BUILD_DIR" --readme "$REPO/README.md")
if [[ $BOOST == 1 ]]; then
  # nice alone does not help: the scheduler shares the CPUs between autogroups
  # (sessions) first, so the benchmark gets a session of its own.
  setsid -w bash -c 'echo -20 > /proc/self/autogroup && exec "$@"' bash \
    "${CMD[@]}" --note "Run with --boost (autogroup nice -20)." "${PASS[@]}"
else
  "${CMD[@]}" "${PASS[@]}"
fi
