#!/usr/bin/env bash
# Cluster scaling: start-position perft(DEPTH) in one process on 2 threads versus on
# `arbiter local` with 2 one-thread workers (same hash size per process), in the same run.
# Efficiency = in-process time / distributed time (1.0 = no cost for distribution).
# Usage: bench/cluster_scaling.sh [BUILD_DIR]   (env: DEPTH=8 HASH=256)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
ARBITER="$BUILD/cli/arbiter"
DEPTH="${DEPTH:-8}"
HASH="${HASH:-256}"
[[ -x "$ARBITER" ]] || { echo "build first: $ARBITER not found" >&2; exit 1; }

seconds_of() { sed -n 's/^Time: \([0-9.]*\) s$/\1/p'; }
nodes_of() { sed -n 's/^Nodes searched: \([0-9]*\)$/\1/p'; }

echo "== in-process: perft($DEPTH), 2 threads, hash $HASH MB"
local_out=$("$ARBITER" perft --startpos --depth "$DEPTH" --threads 2 --hash "$HASH")
echo "$local_out" | tail -3
t_local=$(echo "$local_out" | seconds_of)
n_local=$(echo "$local_out" | nodes_of)

echo "== arbiter local: 2 workers x 1 thread, hash $HASH MB each"
log=$(mktemp)
"$ARBITER" local --workers 2 --threads 1 --listen 127.0.0.1:0 >"$log" 2>"$log.err" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log" "$log.err"' EXIT
for _ in $(seq 100); do grep -q "coordinator on" "$log" && break; sleep 0.1; done
addr=$(sed -n 's/.*coordinator on \([0-9.:]*\) .*/\1/p' "$log")
sleep 0.5  # let both workers register
dist_out=$("$ARBITER" perft --startpos --depth "$DEPTH" --hash "$HASH" --coordinator "$addr" 2>/dev/null)
echo "$dist_out" | tail -3
t_dist=$(echo "$dist_out" | seconds_of)
n_dist=$(echo "$dist_out" | nodes_of)

[[ "$n_local" == "$n_dist" ]] || { echo "MISMATCH: $n_local vs $n_dist" >&2; exit 1; }
awk -v a="$t_local" -v b="$t_dist" -v n="$n_dist" 'BEGIN {
  printf "perft nodes %s both ways; in-process %.2f s, distributed %.2f s, efficiency %.3f (target >= 0.9)\n", n, a, b, a / b }'
