#!/usr/bin/env bash
# truncate-while-stopped.sh FILE SIZE CMD ARG...
#
# Runs CMD (the toy model) with TOY_STOP_BEFORE_RUN set, so that it stops
# itself (SIGSTOP) once its weights are open and checked and before its run
# reads them; truncates FILE to SIZE while it is stopped; resumes it and
# exits with its status (128 + N when signal N killed it: 135 for SIGBUS).
set -u
file=$1 size=$2
shift 2
TOY_STOP_BEFORE_RUN=1 "$@" &
pid=$!
# Field 3 of /proc/PID/stat is the state: T once it has stopped, Z if it
# ended without stopping. At most about a minute.
for _ in $(seq 6000); do
  state=$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null) || break
  [ "$state" = T ] || [ "$state" = Z ] && break
  sleep 0.01
done
truncate -s "$size" "$file"
kill -CONT "$pid" 2>/dev/null
wait "$pid"
