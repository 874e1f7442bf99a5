#!/usr/bin/env bash
# Cluster scaling: start-position perft(DEPTH) in one process on 2 threads sharing one hash of
# HASH MB, versus `arbiter local` with 2 one-thread workers of HASH/2 MB each (the same total hash
# memory and the same number of threads), in the same run. The cluster's time is the whole
# `arbiter perft --coordinator` command: submission, the coordinator's split, the jobs, the result.
# Efficiency = in-process wall time / cluster wall time (1.0 = distribution costs nothing); the CPU
# seconds of both sides are printed too (on a shared machine they are the steadier measure).
# Usage: bench/cluster_scaling.sh [BUILD_DIR]   (env: DEPTH=8 HASH=256)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
ARBITER="$BUILD/cli/arbiter"
DEPTH="${DEPTH:-8}"
HASH="${HASH:-256}"
WORKER_HASH=$((HASH / 2))
[[ -x "$ARBITER" ]] || { echo "build first: $ARBITER not found" >&2; exit 1; }

now() { date +%s.%N; }
nodes_of() { sed -n 's/^Nodes searched: \([0-9]*\)$/\1/p'; }
# CPU seconds (user + system) a process has used so far.
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }

echo "== in-process: perft($DEPTH), 2 threads, one hash of $HASH MB"
out_file=$(mktemp)
TIMEFORMAT='%R %U %S'
times_in=$({ time "$ARBITER" perft --startpos --depth "$DEPTH" --threads 2 --hash "$HASH" \
  >"$out_file" 2>/dev/null; } 2>&1)
local_out=$(cat "$out_file"); rm -f "$out_file"
echo "$local_out" | tail -3
n_local=$(echo "$local_out" | nodes_of)
read -r w_local u_in s_in <<<"$times_in"
cpu_in=$(awk -v a="$u_in" -v b="$s_in" 'BEGIN { print a + b }')

echo "== arbiter local: 2 workers x 1 thread, hash $WORKER_HASH MB each ($HASH MB in all)"
log=$(mktemp)
"$ARBITER" local --workers 2 --threads 1 --hash "$WORKER_HASH" --listen 127.0.0.1:0 >"$log" 2>"$log.err" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log" "$log.err"' EXIT
for _ in $(seq 100); do grep -q "coordinator on" "$log" && break; sleep 0.1; done
addr=$(sed -n 's/.*coordinator on \([0-9.:]*\) .*/\1/p' "$log")
sleep 0.5  # let both workers register
c0=$(cpu_of "$pid")
t0=$(now)
dist_out=$("$ARBITER" perft --startpos --depth "$DEPTH" --hash "$WORKER_HASH" --coordinator "$addr" 2>/dev/null)
t1=$(now)
c1=$(cpu_of "$pid")
echo "$dist_out" | tail -3
n_dist=$(echo "$dist_out" | nodes_of)
w_dist=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
cpu_dist=$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')

[[ "$n_local" == "$n_dist" ]] || { echo "MISMATCH: $n_local vs $n_dist" >&2; exit 1; }
awk -v a="$w_local" -v b="$w_dist" -v ca="$cpu_in" -v cb="$cpu_dist" -v n="$n_dist" 'BEGIN {
  printf "perft nodes %s both ways; wall: in-process %.2f s, cluster %.2f s; CPU: in-process %.2f s, cluster %.2f s\n", n, a, b, ca, cb
  printf "efficiency %.3f (wall; target >= 0.9), CPU efficiency %.3f\n", a / b, ca / cb }'
