#!/usr/bin/env bash
# Cluster scaling: start-position perft(DEPTH) in one process on 2 threads sharing one hash of
# HASH MB, versus `arbiter local` with 2 one-thread workers (HASH/2 MB each, which the workers of
# one process pool into one table), in the same run, ROUNDS times alternately; medians. Also, as
# a real cluster would run, a coordinator and 2 `arbiter worker` processes on loopback, each
# with its own HASH/2 MB table (transpositions between workers are merged by the coordinator's
# split instead).
# A cluster's time is the whole `arbiter perft --coordinator` command: submission, the
# coordinator's split, the jobs, the result. Each round starts fresh clusters (a worker keeps
# its hash across runs, so a second run on the same cluster would be answered from it); their
# workers allocate their hash at startup, as a running cluster has (the in-process run
# allocates and zeroes its table inside its time).
# Efficiency = in-process wall time / cluster wall time (1.0 = distribution costs nothing); the CPU
# seconds of both sides are printed too (on a shared machine they are the steadier measure).
# Usage: bench/cluster_scaling.sh [BUILD_DIR]   (env: DEPTH=8 HASH=256 ROUNDS=3 SEPARATE=1;
#   CLUSTER_FLAGS: more flags for the clusters' perft, e.g. "--split-memory-positions 100000")
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

pids=()
tmp=$(mktemp -d)
plans=$(mktemp -d)
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$tmp" "$plans"
}
trap cleanup EXIT
stop_all() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done; pids=(); }
cpu_sum() { local t=0 p; for p in "${pids[@]}"; do t=$(awk -v a="$t" -v b="$(cpu_of "$p")" 'BEGIN { print a + b }'); done; echo "$t"; }
# Waits until FILE has N lines containing TEXT.
wait_lines() { for _ in $(seq 300); do [[ $(grep -c "$2" "$1" 2>/dev/null || true) -ge $3 ]] && return; sleep 0.1; done; }

# Starts a cluster (local: `arbiter local`; separate: coordinator + 2 worker processes), runs the
# perft on it, stops it; prints "WALL CPU NODES".
run_cluster() {
  local addr token=()
  rm -rf "$tmp"/*
  if [[ $1 == local ]]; then
    "$ARBITER" local --workers 2 --threads 1 --hash "$WORKER_HASH" --listen 127.0.0.1:0 \
      >"$tmp/out" 2>"$tmp/err" &
    pids+=($!)
    wait_lines "$tmp/err" "registered with" 2
    addr=$(sed -n 's/.*coordinator on \([0-9.:]*\) .*/\1/p' "$tmp/out")
  else
    "$ARBITER" coordinator --listen 127.0.0.1:0 --data "$tmp/data" >"$tmp/out" 2>"$tmp/err" &
    pids+=($!)
    wait_lines "$tmp/err" "listening on port" 1
    addr="127.0.0.1:$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/err" | head -1)"
    # The coordinator admits only tokens: the first admin's submits, a worker token registers.
    token=(--token-file "$tmp/data/admin.token")
    "$ARBITER" "${token[@]}" tokens create --name bench-worker --role worker --coordinator "$addr" \
      2>/dev/null | head -1 >"$tmp/worker.token"
    for i in 1 2; do
      "$ARBITER" --token-file "$tmp/worker.token" worker --coordinator "$addr" --threads 1 \
        --hash "$WORKER_HASH" --name "w$i" \
        >/dev/null 2>"$tmp/w$i.err" &
      pids+=($!)
    done
    wait_lines "$tmp/err" "registered:" 2
  fi
  local c0 c1 t0 t1 out k0 k1
  c0=$(cpu_sum); t0=$(now); k0=$(cpu_of "${pids[0]}")
  out=$("$ARBITER" "${token[@]}" perft --startpos --depth "$DEPTH" --hash "$WORKER_HASH" \
    --coordinator "$addr" ${CLUSTER_FLAGS:-} 2>/dev/null)
  t1=$(now); c1=$(cpu_sum); k1=$(cpu_of "${pids[0]}")
  # When the first jobs existed (the coordinator logs them once stored): the planned run's line
  # for a split merged at once, the first shard's for a streamed one; counted from the submit.
  local first stamp
  first=$(grep -m1 'streamed split shard 1 ' "$tmp/err" || grep -m1 'split at depth' "$tmp/err" || true)
  stamp=$(sed -n 's/^\[\([0-9-]* [0-9:.]*\)\].*/\1/p' <<<"$first")
  if [[ -n "$stamp" ]]; then
    first=$(awk -v a="$t0" -v b="$(date -d "$stamp" +%s.%N 2>/dev/null || echo "$t0")" \
      'BEGIN { printf "%.3f", b - a }')
  else
    first=0  # not logged (an older coordinator)
  fi
  # The coordinator's plan of the run (its split, jobs and lanes), printed once per cluster kind.
  grep -m1 -o 'split at depth [^;]*' "$tmp/err" >"$plans/$1" || true
  stop_all
  awk -v a="$t0" -v b="$t1" -v ca="$c0" -v cb="$c1" -v n="$(echo "$out" | nodes_of)" \
    -v k="$(awk -v x="$k0" -v y="$k1" 'BEGIN { print y - x }')" -v f="$first" \
    'BEGIN { printf "%.3f %.2f %s %.2f %.3f\n", b - a, cb - ca, n, k, f }'
}

modes=(local)
[[ "${SEPARATE:-1}" == 1 ]] && modes+=(separate)
declare -A walls cpus ratios
in_wall=() in_cpu=()
for round in $(seq "$ROUNDS"); do
  out_file=$(mktemp)
  TIMEFORMAT='%R %U %S'
  times_in=$({ time "$ARBITER" perft --startpos --depth "$DEPTH" --threads 2 --hash "$HASH" \
    >"$out_file" 2>/dev/null; } 2>&1)
  n_local=$(nodes_of <"$out_file"); rm -f "$out_file"
  read -r w u s <<<"$times_in"
  c=$(awk -v a="$u" -v b="$s" 'BEGIN { print a + b }')
  in_wall+=("$w"); in_cpu+=("$c")
  line="round $round: in-process ${w} s (CPU ${c} s)"
  for m in "${modes[@]}"; do
    read -r cw cc n kc first <<<"$(run_cluster "$m")"
    [[ "$n_local" == "$n" ]] || { echo "MISMATCH ($m): $n_local vs $n" >&2; exit 1; }
    walls[$m]+="$cw "; cpus[$m]+="$cc "
    ratios[$m]+="$(awk -v a="$w" -v b="$cw" 'BEGIN { print a / b }') "
    line+=$(awk -v m="$m" -v b="$cw" -v cb="$cc" -v a="$w" 'BEGIN { printf "; %s %.2f s (CPU %.2f s, %.3f)", m, b, cb, a / b }')
    if [[ $m == separate ]]; then
      line+=$(awk -v kc="$kc" -v cc="$cc" -v f="$first" \
        'BEGIN { printf " [coordinator CPU %.2f s, workers CPU %.2f s; first jobs %.2f s after the submit]", kc, cc - kc, f }')
    fi
  done
  echo "$line"
done
med() { tr ' ' '\n' | grep -v '^$' | median; }
mw_in=$(printf '%s\n' "${in_wall[@]}" | median); mc_in=$(printf '%s\n' "${in_cpu[@]}" | median)
echo "perft($DEPTH) nodes $n_local everywhere; medians of $ROUNDS rounds; in-process: wall $mw_in s, CPU $mc_in s"
for m in "${modes[@]}"; do
  what="arbiter local, 2 workers sharing one hash"
  [[ $m == separate ]] && what="coordinator + 2 worker processes, a hash each"
  awk -v what="$what" -v b="$(echo "${walls[$m]}" | med)" -v cb="$(echo "${cpus[$m]}" | med)" \
    -v r="$(echo "${ratios[$m]}" | med)" -v ca="$mc_in" 'BEGIN {
    printf "%s: wall %.2f s, CPU %.2f s; efficiency %.3f (median wall ratio; target >= 0.9), CPU efficiency %.3f\n", what, b, cb, r, ca / cb }'
  [[ -s "$plans/$m" ]] && echo "  its plan: $(cat "$plans/$m")"
done
