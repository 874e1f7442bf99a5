#!/usr/bin/env bash
# movegen-check on the cluster vs the engine's own perft: `arbiter local` with 2 workers checks
# Stockfish over the 128-position standard suite to depth 5 (Stockfish's perft + arbiter's count
# + the descent machinery), against Stockfish's own `go perft 5` over the same positions back to
# back on 2 cores (two Stockfish processes, half of the positions each). Prints both wall times
# and the ratio (target: at most 1.2); ROUNDS (default 3) alternating rounds, medians.
# Usage: bench/movegen_check.sh [ARBITER] [SUITE] [DEPTH]
set -euo pipefail
cd "$(dirname "$0")/.."
ARBITER=${1:-build/cli/arbiter}
SUITE=${2:-tests/data/perft/standard.epd}
DEPTH=${3:-5}
SF=${SF:-/usr/games/stockfish}
tmp=$(mktemp -d)
local_pid=""
cleanup() {
  [[ -n $local_pid ]] && kill "$local_pid" 2>/dev/null && wait "$local_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

now() { date +%s.%N; }

# Stockfish alone: positions split in two halves, one process each, run at the same time.
grep -v '^\s*\(#\|$\)' "$SUITE" | sed 's/ *;.*//' > "$tmp/fens"
n=$(wc -l < "$tmp/fens")
for half in 0 1; do
  awk -v h=$half -v d="$DEPTH" 'NR % 2 == h { print "position fen " $0; print "go perft " d }
    END { print "quit" }' "$tmp/fens" > "$tmp/cmds$half"
done
stockfish_alone() {
  local t0 t1 done_lines
  t0=$(now)
  "$SF" < "$tmp/cmds0" > "$tmp/sf0" &
  local p0=$!
  "$SF" < "$tmp/cmds1" > "$tmp/sf1" &
  local p1=$!
  wait $p0 $p1
  t1=$(now)
  done_lines=$(cat "$tmp/sf0" "$tmp/sf1" | grep -c '^Nodes searched' || true)
  if [[ $done_lines -ne $n ]]; then
    echo "stockfish answered $done_lines of $n perft requests" >&2
    exit 1
  fi
  echo "$t1 - $t0" | bc -l
}

# The same on arbiter local with 2 workers (a fresh cluster each round).
movegen_check() {
  rm -rf "$tmp/data"
  "$ARBITER" local --workers 2 --listen 127.0.0.1:0 --data "$tmp/data" > "$tmp/local.log" 2>&1 &
  local_pid=$!
  for _ in $(seq 1 100); do
    grep -q "coordinator on 127.0.0.1:" "$tmp/local.log" && break
    sleep 0.1
  done
  local port t2 t3
  port=$(grep -o "coordinator on 127.0.0.1:[0-9]*" "$tmp/local.log" | grep -o "[0-9]*$")
  t2=$(now)
  "$ARBITER" movegen-check --coordinator "127.0.0.1:$port" --engine "$SF" --suite "$SUITE" \
    --depth "$DEPTH" --quiet > "$tmp/check.txt"
  t3=$(now)
  kill "$local_pid" 2>/dev/null && wait "$local_pid" 2>/dev/null || true
  local_pid=""
  echo "$t3 - $t2" | bc -l
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

ROUNDS=${ROUNDS:-3}
: > "$tmp/sf_walls"
: > "$tmp/check_walls"
for r in $(seq 1 "$ROUNDS"); do
  sf=$(stockfish_alone)
  check=$(movegen_check)
  echo "$sf" >> "$tmp/sf_walls"
  echo "$check" >> "$tmp/check_walls"
  printf 'round %d: stockfish %.2f s, movegen-check %.2f s, ratio %.2f\n' "$r" "$sf" "$check" \
    "$(echo "$check / $sf" | bc -l)"
done
sf_nodes=$(cat "$tmp/sf0" "$tmp/sf1" | awk '/^Nodes searched/ { s += $3 } END { printf "%d", s }')
sf_wall=$(median < "$tmp/sf_walls")
check_wall=$(median < "$tmp/check_walls")
cat "$tmp/check.txt"
echo
printf 'positions %d, depth %d, %s nodes, medians of %d alternating rounds\n' "$n" "$DEPTH" \
  "$sf_nodes" "$ROUNDS"
printf 'stockfish own perft, 2 processes: %.2f s\n' "$sf_wall"
printf 'movegen-check on arbiter local (2 workers): %.2f s\n' "$check_wall"
printf 'ratio: %.2f (target: at most 1.2)\n' "$(echo "$check_wall / $sf_wall" | bc -l)"
