#!/usr/bin/env bash
# A deep perft with a streamed split on `arbiter local` (not run in CI): start-position
# perft(DEPTH) split at ply SPLIT (default DEPTH - 3) in shards of at most MEMORY split positions (the
# coordinator's memory bound for the split), on WORKERS one-thread workers. Prints the wall time,
# the nodes (checked against the known count), the job and shard counts, and the peak RSS of the
# `arbiter local` process (VmHWM: the coordinator and its workers; with HASH=0 the workers hold
# no table). SEPARATE=1: a coordinator process and WORKERS worker processes instead, and the
# peak RSS is the coordinator's alone.
# Known counts: perft(8) 84,998,978,956; perft(9) 2,439,530,234,167; perft(10) 69,352,859,712,417.
# MEMORY=0: the in-memory split at the same ply instead, for comparison.
# Usage: bench/perft_streamed.sh [BUILD_DIR]
#        (env: DEPTH=10 SPLIT=DEPTH-3 MEMORY=1000000 WORKERS=2 HASH=0 SEPARATE=0)
# perft(10) end to end in ~15 min on 2 cores: DEPTH=10 SPLIT=6 HASH=256 bench/perft_streamed.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
ARBITER="$BUILD/cli/arbiter"
DEPTH="${DEPTH:-10}"
MEMORY="${MEMORY:-1000000}"
WORKERS="${WORKERS:-2}"
HASH="${HASH:-0}"
[[ -x "$ARBITER" ]] || { echo "build first: $ARBITER not found" >&2; exit 1; }
declare -A known=([5]=4865609 [6]=119060324 [7]=3195901860 [8]=84998978956 [9]=2439530234167
                  [10]=69352859712417)

tmp=$(mktemp -d)
pid=""
pids=()
cleanup() {
  for p in "${pids[@]}" "$pid"; do [[ -n "$p" ]] && { kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; }; done
  rm -rf "$tmp"
}
trap cleanup EXIT

pids=()
if [[ "${SEPARATE:-0}" == 1 ]]; then
  # A coordinator process and WORKERS worker processes: the peak RSS is the coordinator's alone.
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/token"
  export ARBITER_TOKEN_FILE="$tmp/token"  # the admin's: the workers' and the CLI's calls
  "$ARBITER" coordinator --listen 127.0.0.1:0 --data "$tmp/data" --admin-token-file "$tmp/token" \
    >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  for _ in $(seq 300); do grep -q "listening on port" "$tmp/err" 2>/dev/null && break; sleep 0.1; done
  addr="127.0.0.1:$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/err" | head -1)"
  for i in $(seq "$WORKERS"); do
    "$ARBITER" worker --coordinator "$addr" --threads 1 --hash "$HASH" --name "w$i" \
      >/dev/null 2>"$tmp/w$i.err" &
    pids+=($!)
  done
  for _ in $(seq 300); do
    [[ $(grep -c "registered:" "$tmp/err" 2>/dev/null || true) -ge "$WORKERS" ]] && break
    sleep 0.1
  done
  what="the coordinator process"
else
  "$ARBITER" local --workers "$WORKERS" --threads 1 --hash "$HASH" --listen 127.0.0.1:0 \
    --data "$tmp/data" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  for _ in $(seq 300); do
    [[ $(grep -c "registered with" "$tmp/err" 2>/dev/null || true) -ge "$WORKERS" ]] && break
    sleep 0.1
  done
  addr=$(sed -n 's/.*coordinator on \([0-9.:]*\) .*/\1/p' "$tmp/out")
  what="arbiter local (coordinator + workers)"
fi
[[ -n "$addr" ]] || { echo "the cluster did not start:" >&2; cat "$tmp/err" >&2; exit 1; }

split="${SPLIT:-$((DEPTH > 3 ? DEPTH - 3 : 1))}"
t0=$(date +%s.%N)
stream=()
[[ "$MEMORY" != 0 ]] && stream=(--split-memory-positions "$MEMORY")
out=$("$ARBITER" perft --startpos --depth "$DEPTH" --hash "$HASH" --split-depth "$split" \
  "${stream[@]}" --coordinator "$addr" 2>/dev/null)
t1=$(date +%s.%N)
nodes=$(sed -n 's/^Nodes searched: \([0-9]*\)$/\1/p' <<<"$out")
hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
show=$("$ARBITER" runs --coordinator "$addr" show 1)
jobs=$("$ARBITER" runs --coordinator "$addr" --json show 1 | sed -n 's/.*"total": *"\{0,1\}\([0-9]*\).*/\1/p' | head -1)
chunks=$(grep -m1 '^Streamed:' <<<"$show" || true)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
if [[ "$MEMORY" != 0 ]]; then
  echo "perft($DEPTH) streamed: split at ply $split, at most $MEMORY split positions a shard, $WORKERS workers, hash $HASH MB"
else
  echo "perft($DEPTH) in-memory split at ply $split (for comparison), $WORKERS workers, hash $HASH MB"
fi
echo "nodes: $nodes (expected ${known[$DEPTH]:-unknown})"
echo "time: $secs s"
echo "jobs: $jobs"
[[ -n "$chunks" ]] && echo "$chunks"
grep -m1 '^Split:' <<<"$show" || true
echo "peak RSS of $what: $((hwm / 1024)) MB"
grep -m3 "streamed split shard" "$tmp/err" | sed 's/^/log: /' || true
[[ -z "${known[$DEPTH]:-}" || "$nodes" == "${known[$DEPTH]}" ]] || { echo "WRONG COUNT" >&2; exit 1; }
