#!/usr/bin/env bash
# Cluster scaling: start-position perft(DEPTH) in one process on 2 threads sharing one hash of
# HASH MB, versus `arbiter local` with 2 one-thread workers of HASH/2 MB each (the same total hash
# memory and the same number of threads), in the same run, ROUNDS times alternately; medians.
# The cluster's time is the whole `arbiter perft --coordinator` command: submission, the
# coordinator's split, the jobs, the result. Each round starts a fresh `arbiter local` (a worker
# keeps its hash across runs, so a second run on the same cluster would be answered from it);
# its workers allocate their hash at startup, as a running cluster has (the in-process run
# allocates and zeroes its table inside its time).
# Efficiency = in-process wall time / cluster wall time (1.0 = distribution costs nothing); the CPU
# seconds of both sides are printed too (on a shared machine they are the steadier measure).
# Usage: bench/cluster_scaling.sh [BUILD_DIR]   (env: DEPTH=8 HASH=256 ROUNDS=3)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
ARBITER="$BUILD/cli/arbiter"
DEPTH="${DEPTH:-8}"
HASH="${HASH:-256}"
ROUNDS="${ROUNDS:-3}"
WORKER_HASH=$((HASH / 2))
[[ -x "$ARBITER" ]] || { echo "build first: $ARBITER not found" >&2; exit 1; }

now() { date +%s.%N; }
nodes_of() { sed -n 's/^Nodes searched: \([0-9]*\)$/\1/p'; }
# CPU seconds (user + system) a process has used so far.
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

pid=""
log=$(mktemp)
cleanup() { [[ -n "$pid" ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; rm -f "$log" "$log.err"; }
trap cleanup EXIT

in_wall=() in_cpu=() cl_wall=() cl_cpu=() ratios=()
n_local="" n_dist=""
for round in $(seq "$ROUNDS"); do
  # In-process.
  out_file=$(mktemp)
  TIMEFORMAT='%R %U %S'
  times_in=$({ time "$ARBITER" perft --startpos --depth "$DEPTH" --threads 2 --hash "$HASH" \
    >"$out_file" 2>/dev/null; } 2>&1)
  n_local=$(nodes_of <"$out_file"); rm -f "$out_file"
  read -r w u s <<<"$times_in"
  in_wall+=("$w"); in_cpu+=("$(awk -v a="$u" -v b="$s" 'BEGIN { print a + b }')")

  # A fresh local cluster.
  "$ARBITER" local --workers 2 --threads 1 --hash "$WORKER_HASH" --listen 127.0.0.1:0 \
    >"$log" 2>"$log.err" &
  pid=$!
  for _ in $(seq 200); do [[ $(grep -c "registered with" "$log.err" || true) -ge 2 ]] && break; sleep 0.1; done
  addr=$(sed -n 's/.*coordinator on \([0-9.:]*\) .*/\1/p' "$log")
  c0=$(cpu_of "$pid"); t0=$(now)
  dist_out=$("$ARBITER" perft --startpos --depth "$DEPTH" --hash "$WORKER_HASH" --coordinator "$addr" 2>/dev/null)
  t1=$(now); c1=$(cpu_of "$pid")
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
  n_dist=$(echo "$dist_out" | nodes_of)
  [[ "$n_local" == "$n_dist" ]] || { echo "MISMATCH: $n_local vs $n_dist" >&2; exit 1; }
  cw=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
  cc=$(awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }')
  cl_wall+=("$cw"); cl_cpu+=("$cc")
  ratios+=("$(awk -v a="$w" -v b="$cw" 'BEGIN { print a / b }')")
  awk -v r="$round" -v a="$w" -v b="$cw" -v ca="${in_cpu[-1]}" -v cb="$cc" 'BEGIN {
    printf "round %d: wall in-process %.2f s, cluster %.2f s (%.3f); CPU %.2f s vs %.2f s (%.3f)\n", r, a, b, a / b, ca, cb, ca / cb }'
done
echo "$dist_out" | grep -E "^(Time|Speed)" || true
mw_in=$(printf '%s\n' "${in_wall[@]}" | median); mw_cl=$(printf '%s\n' "${cl_wall[@]}" | median)
mc_in=$(printf '%s\n' "${in_cpu[@]}" | median); mc_cl=$(printf '%s\n' "${cl_cpu[@]}" | median)
mr=$(printf '%s\n' "${ratios[@]}" | median)
awk -v n="$n_dist" -v a="$mw_in" -v b="$mw_cl" -v ca="$mc_in" -v cb="$mc_cl" -v r="$mr" -v k="$ROUNDS" 'BEGIN {
  printf "perft nodes %s both ways; medians of %d rounds: wall in-process %.2f s, cluster %.2f s; CPU in-process %.2f s, cluster %.2f s\n", n, k, a, b, ca, cb
  printf "efficiency %.3f (median wall ratio; target >= 0.9), CPU efficiency %.3f\n", r, ca / cb }'
