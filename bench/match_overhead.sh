#!/usr/bin/env bash
# Match runner overhead: Stockfish vs Stockfish at 1+0.01 and 0.2+0.002, concurrency 2.
# Prints games/min, time losses, disconnects, arbiter's overhead per move
#   (wall x slots - engine think time) / moves        -- includes engine start-up and ucinewgame
#   game-loop overhead per move (inside games only)   -- arbiter's own latency per move
# and arbiter's own CPU time per move, checks the PGN with pgn-extract and that the
# pentanomial pairs add up to the game count. fastchess is not installed here: numbers are ours.
#
#   bench/match_overhead.sh [GAMES]            # default 200 games per time control
#   MEMORY_GAMES=10000 bench/match_overhead.sh # also: RSS over 10,000 short test-engine games
#   SANDBOX=namespaces bench/match_overhead.sh # engines in the sandbox (--sandbox; default off)
set -euo pipefail
cd "$(dirname "$0")/.."
GAMES=${1:-200}
ARBITER=${ARBITER:-build/cli/arbiter}
STOCKFISH=${STOCKFISH:-/usr/games/stockfish}
TEST_ENGINE=${TEST_ENGINE:-build/tests/match/engines/arbiter_test_engine}
PGN_EXTRACT=$(command -v pgn-extract || echo /usr/games/pgn-extract)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
[ -x "$ARBITER" ] || { echo "build arbiter first (ninja -C build)"; exit 1; }

run() {  # name tc extra-engine-args...
  local name=$1 tc=$2
  shift 2
  local pgn="$OUT/$name.pgn" json="$OUT/$name.json"
  echo "== $name: $GAMES games at $tc, concurrency 2"
  "$ARBITER" match "$@" --tc "$tc" --games "$GAMES" --concurrency 2 --pgn-out "$pgn" \
      --sandbox "${SANDBOX:-off}" --json --quiet > "$json"
  python3 - "$json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
s = r["stats"]
p = s["penta"]
pairs = sum(int(p.get(k, 0)) for k in ("ll", "ld", "d", "wd", "ww"))
f = r["faults"]
tl = sum(int(x["time_losses"]) for x in f)
dc = sum(int(x["disconnects"]) + int(x["stalls"]) for x in f)
il = sum(int(x["illegal_moves"]) for x in f)
print(f"games {r['games']}  W/D/L {s['wdl']['wins']}/{s['wdl']['draws']}/{s['wdl']['losses']}"
      f"  penta [{p.get('ll',0)}, {p.get('ld',0)}, {p.get('d',0)}, {p.get('wd',0)}, {p.get('ww',0)}]"
      f"  pairs x 2 = {2*pairs} ({'ok' if 2*pairs == int(r['games']) else 'MISMATCH'})")
print(f"terminations {r['terminations']}")
print(f"time losses {tl}  disconnects+stalls {dc}  illegal moves {il}")
print(f"{r['games_per_minute']:.1f} games/min, {r['moves']} moves; overhead "
      f"{r['overhead_ms_per_move']:.3f} ms/move (wall x slots - think), game loop "
      f"{r['game_loop_overhead_ms_per_move']:.3f} ms/move, arbiter CPU "
      f"{r['cpu_ms_per_move']:.3f} ms/move; arbiter peak RSS {int(r['max_rss_kib'])/1024:.1f} MiB, "
      f"{float(r['seconds']):.1f} s")
EOF
  if "$PGN_EXTRACT" --quiet -o /dev/null "$pgn" 2> "$OUT/pgn-extract.err" &&
     [ ! -s "$OUT/pgn-extract.err" ]; then
    echo "pgn-extract: $(grep -c '^\[Event ' "$pgn") games read without complaint"
  else
    echo "pgn-extract complained:"; head "$OUT/pgn-extract.err"
  fi
}

SF="cmd=$STOCKFISH,option.Hash=16,option.Threads=1"
run sf-1+0.01 1+0.01 --engine "name=sf-a,$SF" --engine "name=sf-b,$SF"
run sf-0.2+0.002 0.2+0.002 --engine "name=sf-a,$SF" --engine "name=sf-b,$SF"
if [ -n "${UCI_GAMES:-}" ]; then
  GAMES=$UCI_GAMES run arbiter-vs-sf 1+0.01 --engine "name=arbiter,cmd=$ARBITER uci" \
    --engine "name=sf,$SF,option.UCI_LimitStrength=true,option.UCI_Elo=1500"
fi

if [ -n "${MEMORY_GAMES:-}" ]; then
  echo "== memory: $MEMORY_GAMES short games between test engines (max 10 moves), concurrency 2"
  "$ARBITER" match --engine "name=t1,cmd=$TEST_ENGINE" --engine "name=t2,cmd=$TEST_ENGINE" \
    --tc 10+0.1 --max-moves 10 --games "$MEMORY_GAMES" --concurrency 2 2>&1 >/dev/null |
    grep '^Games' | awk -v n="$MEMORY_GAMES" \
      '{ split($2, g, "/"); if (g[1] == 100 || g[1] == 1000 || g[1] == n) print "after " $0 }' |
    sed 's/  Elo.*RSS/: RSS/'
fi
