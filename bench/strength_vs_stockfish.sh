#!/usr/bin/env bash
# Strength of the builtin engine: game pairs against Debian's Stockfish limited with
# UCI_LimitStrength/UCI_Elo, from 20 balanced openings (bench/strength/openings.epd), both
# engines with the same Move Overhead. Uses `arbiter match` (RUNNER=match, the default) or the
# small tool bench/strength/strength_match.cc (RUNNER=tool); both arbitrate every game with the
# match library's game loop (clocks, legality, faults).
# Usage: bench/strength_vs_stockfish.sh [BUILD_DIR]
#   ELOS="1800 2000 2200" GAMES=200 TC=10+0.1 CONCURRENCY=1 OVERHEAD_MS=100 RUNNER=match \
#     bench/strength_vs_stockfish.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
elos=${ELOS:-"1800 2000 2200"}
games=${GAMES:-200}
tc=${TC:-10+0.1}
concurrency=${CONCURRENCY:-1}
overhead=${OVERHEAD_MS:-100}
runner=${RUNNER:-match}
stockfish=${STOCKFISH:-/usr/games/stockfish}
arbiter=$(realpath "$build/cli/arbiter")
[[ -x $arbiter ]] || { echo "build first: cmake --build $build" >&2; exit 2; }
[[ -x $stockfish ]] || { echo "no Stockfish at $stockfish (apt-get install stockfish)" >&2; exit 2; }
echo "bench signature: $("$arbiter" bench | grep 'Nodes searched')"
for elo in $elos; do
  echo "== vs Stockfish UCI_Elo $elo, $games games at $tc"
  if [[ $runner == match ]]; then
    "$arbiter" match --quiet --games "$games" --tc "$tc" --concurrency "$concurrency" \
      --openings bench/strength/openings.epd \
      --engine "name=arbiter,cmd=$arbiter uci,option.Hash=16,option.Move Overhead=$overhead" \
      --engine "name=stockfish-$elo,cmd=$stockfish,option.Threads=1,option.Hash=16,option.Move Overhead=$overhead,option.UCI_LimitStrength=true,option.UCI_Elo=$elo"
  else
    "$build/bench/strength_match" "$arbiter" "$stockfish" "$elo" "$games" "$tc" \
      "$concurrency" "$overhead" | tail -n 1
  fi
done
