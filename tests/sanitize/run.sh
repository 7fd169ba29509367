#!/usr/bin/env bash
# run.sh DIR CTEST-ARGS...: runs part of the sanitizer build's tests (DIR is
# build-asan, configured with TMC_SANITIZE=address,undefined by `make test`).
# Any ASan, LeakSanitizer or UBSan report fails the test it happens in: the
# instrumented programs abort on the first one (-fno-sanitize-recover), and
# the malformed-input runner also looks for reports in what a child printed.
set -euo pipefail
dir=$1
shift
if [[ ! -f "$dir/CTestTestfile.cmake" ]]; then
  echo "no sanitizer build in $dir: 'make test' (or 'make asan') configures and builds it"
  exit 77 # ctest: skipped
fi
here=$(cd "$(dirname "$0")" && pwd)
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-19/bin/llvm-symbolizer
# detect_leaks: LeakSanitizer at exit (on by default; said so for the reader).
# allow_user_poisoning=0: LLVM's headers poison and unpoison BumpPtrAllocator
# memory by hand when compiled with ASan. Our instrumented code inlines those
# headers but links the uninstrumented MLIR/LLVM libraries, which allocate
# from the same slabs without unpoisoning: every MLIRContext then reports a
# false use-after-poison (mlir::Dialect::addType). Only that manual
# poisoning is turned off (tmc never poisons by hand); every access is still
# checked against ASan's own redzones and freed memory.
# quarantine_size_mb=32: freed memory stays poisoned (a use after free is
# caught) until 32 MiB more has been freed, not ASan's default 256. The
# instrumented tmc's heap is mostly LLVM's, which frees and allocates
# constantly while it writes a kernel: with 256 MiB held back every new
# allocation faulted in fresh pages, and page faults are costly in a VM (a
# cold encoder-decoder.tm compile: 1.5 M faults, 15 s of system time, 24 s
# wall; at 16 MiB 0.74 M, 9 s, 19 s). The tests' own objects are small and
# short-lived, far inside 32 MiB of frees.
export ASAN_OPTIONS="detect_leaks=1:allow_user_poisoning=0:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=1:quarantine_size_mb=32"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
exec ctest --test-dir "$dir" --output-on-failure --no-tests=error "$@"
