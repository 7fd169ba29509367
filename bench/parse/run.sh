#!/bin/sh
# Times parse + check of every example: bench/parse/run.sh [BUILD_DIR] [RUNS]
# (BUILD_DIR defaults to ./build). Builds parse_bench first if needed.
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
runs=${2:-200}
ninja -C "$build" parse_bench >/dev/null
exec "$build/bench/parse/parse_bench" --runs "$runs" "$root"/examples/*.tm
