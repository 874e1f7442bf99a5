#!/usr/bin/env bash
# Strength of the builtin engine: game pairs against Debian's Stockfish limited with
# UCI_LimitStrength/UCI_Elo, arbitrated by the match library's game loop (clocks, legality).
# Usage: bench/strength_vs_stockfish.sh [BUILD_DIR]
#   ELOS="1800 2000 2200" GAMES=200 TC=10+0.1 CONCURRENCY=1 OVERHEAD_MS=100 \
#     bench/strength_vs_stockfish.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
elos=${ELOS:-"1800 2000 2200"}
games=${GAMES:-200}
tc=${TC:-10+0.1}
concurrency=${CONCURRENCY:-1}
overhead=${OVERHEAD_MS:-100}
stockfish=${STOCKFISH:-/usr/games/stockfish}
[[ -x $build/cli/arbiter && -x $build/bench/strength_match ]] ||
  { echo "build first: cmake --build $build (needs cli/arbiter and bench/strength_match)" >&2; exit 2; }
[[ -x $stockfish ]] || { echo "no Stockfish at $stockfish (apt-get install stockfish)" >&2; exit 2; }
echo "bench signature: $("$build/cli/arbiter" bench | grep 'Nodes searched')"
for elo in $elos; do
  "$build/bench/strength_match" "$build/cli/arbiter" "$stockfish" "$elo" "$games" "$tc" \
    "$concurrency" "$overhead" | tail -n 1
done
