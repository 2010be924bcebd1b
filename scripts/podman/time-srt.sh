#!/usr/bin/env bash
# Wall time of one command, N runs after 2 warm-ups: "median MS (min MS, max MS, N runs)".
# Used for `srt -c true` inside the container and on the host alike.
# Usage: time-srt.sh N CMD ARGS...
set -u
n=$1
shift
"$@" >/dev/null 2>&1
"$@" >/dev/null 2>&1
for _ in $(seq "$n"); do
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1 || { echo "failed: $*"; exit 1; }
  echo $(( $(date +%s%N) - start ))
done | sort -n | awk '{ t[NR] = $1 } END {
  m = (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
  printf "median %.1f ms (min %.1f, max %.1f, %d runs)\n", m / 1e6, t[1] / 1e6, t[NR] / 1e6, NR }'
