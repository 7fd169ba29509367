#!/bin/sh
# A C++ compiler that refuses the source whose path contains $FAIL_ON and is
# the system's `c++` for everything else (driver/executor_compile.test).
for arg in "$@"; do
  case "$arg" in
  *"$FAIL_ON"*.cpp)
    echo "fail-cxx: refusing $arg" >&2
    exit 1
    ;;
  esac
done
exec c++ "$@"
