#!/usr/bin/env bash
# Two arbiter binaries' single-thread, no-hash perft side by side: both run at the same time, one
# on each of the first two cores (swapped every round), so that whatever else slows the machine
# slows both; prints each round's CPU seconds and B/A, and the median ratio. For A/B measurements
# of a change to the counting core on a shared, noisy machine (a ratio below 1: B is faster).
# MODE=seq runs them one after the other on the first core instead (A first, then B, every round):
# for machines whose two vCPUs slow each other down (SMT siblings), where running both at once
# measures the neighbour more than the binary.
# Usage: [MODE=par|seq] bench/perft_ab.sh A_BINARY B_BINARY [ROUNDS] [PERFT ARGS...]
#   (ROUNDS default 4; PERFT ARGS default --startpos --depth 7, e.g. --fen "FEN" --depth 6)
set -euo pipefail
cd "$(dirname "$0")/.."
if (($# < 2)); then sed -n '2,10p' "$0"; exit 2; fi
MODE="${MODE:-par}"
[[ "$MODE" == par || "$MODE" == seq ]] || { echo "MODE must be par or seq" >&2; exit 2; }
A="$1" B="$2"
ROUNDS="${3:-4}"
shift $(($# < 3 ? $# : 3))
args=("$@")
((${#args[@]})) || args=(--startpos --depth 7)
for bin in "$A" "$B"; do [[ -x "$bin" ]] || { echo "not an executable: $bin" >&2; exit 2; }; done
(($(nproc) >= 2)) || { echo "needs two cores" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Runs BINARY on CPU, writing its node count and CPU seconds to FILE.
run() {
  local out
  out=$( { /usr/bin/time -f "cpu %U %S" taskset -c "$2" "$1" perft "${args[@]}" --threads 1; } 2>&1)
  { sed -n 's/^Nodes searched: //p' <<<"$out"; awk '/^cpu / { print $2 + $3 }' <<<"$out"; } >"$3"
}
ratios=()
for ((i = 1; i <= ROUNDS; i++)); do
  if [[ "$MODE" == seq ]]; then
    run "$A" 0 "$tmp/a"
    run "$B" 0 "$tmp/b"
  else
    if ((i % 2)); then ca=0 cb=1; else ca=1 cb=0; fi
    run "$A" "$ca" "$tmp/a" & pa=$!
    run "$B" "$cb" "$tmp/b" & pb=$!
    wait "$pa" "$pb"
  fi
  mapfile -t a <"$tmp/a"
  mapfile -t b <"$tmp/b"
  if [[ "${a[0]}" != "${b[0]}" ]]; then
    echo "the counts differ: A ${a[0]}, B ${b[0]}" >&2
    exit 1
  fi
  r=$(awk -v a="${a[1]}" -v b="${b[1]}" 'BEGIN { printf "%.3f", b / a }')
  ratios+=("$r")
  echo "round $i: A ${a[1]} s, B ${b[1]} s CPU, B/A $r (${a[0]} nodes)"
done
median=$(printf '%s\n' "${ratios[@]}" | sort -g |
  awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
echo "perft ${args[*]} ($MODE): B/A CPU time, median of $ROUNDS rounds: $median"
