#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS on its corpus (fuzz/corpus/TARGET, the seeds kept in the
# repo; new inputs go to a scratch copy unless KEEP=1). A crash is written to fuzz/crashes/ and
# the script exits non-zero: add the input to the corpus as a regression once fixed.
# Usage: scripts/fuzz.sh TARGET [SECONDS=30]     (scripts/fuzz.sh all 30: every target in turn)
# RUNS=N [SEED=S] instead: exactly N inputs from seed S (default 1), the same on every machine:
# what CI runs (RUNS=2000 scripts/fuzz.sh all), so that CI fails only on a reproducible input.
# Targets: fen_fuzz move_fuzz pgn_fuzz epd_fuzz tc_fuzz uci_output_fuzz request_fuzz
#          uci_command_fuzz
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS=(fen_fuzz move_fuzz pgn_fuzz epd_fuzz tc_fuzz uci_output_fuzz request_fuzz
  uci_command_fuzz listen_address_fuzz)
target="${1:?usage: scripts/fuzz.sh TARGET|all [SECONDS]}"
seconds="${2:-30}"
dir=build-fuzz
clangxx=$(command -v clang++-14 || command -v clang++ || true)
[[ -n "$clangxx" ]] || { echo "clang++ not found: scripts/install-deps.sh installs it" >&2; exit 2; }
if [[ ! -f "$dir/CMakeCache.txt" ]]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$clangxx" \
    -DARBITER_FUZZ=ON -DARBITER_WERROR=OFF >/dev/null
fi
if [[ "$target" == all ]]; then
  run=("${TARGETS[@]}")
else
  run=("$target")
fi
cmake --build "$dir" -j "$(nproc)" --target "${run[@]}"
mkdir -p fuzz/crashes
status=0
for t in "${run[@]}"; do
  corpus="fuzz/corpus/$t"
  work=$(mktemp -d)
  [[ -d "$corpus" ]] && cp -r "$corpus/." "$work/"
  if [[ -n "${RUNS:-}" ]]; then
    runs=$RUNS
    # The UCI loop starts a search thread per `go`: a tenth of the inputs take as long.
    [[ "$t" == uci_command_fuzz ]] && runs=$(( (RUNS + 9) / 10 ))
    bound=(-runs="$runs" -seed="${SEED:-1}")
  else
    bound=(-max_total_time="$seconds")
  fi
  echo "== $t: ${bound[*]}, $(ls "$work" | wc -l) seed inputs"
  if ! "$dir/fuzz/$t" "${bound[@]}" -print_final_stats=1 -artifact_prefix="fuzz/crashes/$t-" \
      -rss_limit_mb=2048 -timeout=10 "$work" 2>"$work.log"; then
    tail -40 "$work.log"
    echo "== $t: FAILED (input kept in fuzz/crashes/)"
    status=1
  else
    grep -E "stat::number_of_executed_units|cov:" "$work.log" | tail -2
  fi
  if [[ "${KEEP:-0}" == 1 ]]; then mkdir -p "$corpus"; cp -n "$work"/* "$corpus/" 2>/dev/null || true; fi
  rm -rf "$work" "$work.log"
done
exit $status
