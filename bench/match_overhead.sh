#!/usr/bin/env bash
# Match runner overhead: Stockfish vs Stockfish at 0.2+0.002 and 1+0.01, concurrency 2.
# Prints games/min, time losses, disconnects, arbiter's overhead per move
#   (wall x slots - engine think time) / moves        -- includes engine start-up and ucinewgame
#   game-loop overhead per move (inside games only)   -- arbiter's own latency per move
# and arbiter's own CPU time per move, checks the PGN with pgn-extract and that the
# pentanomial pairs add up to the game count.
# When fastchess is found (FASTCHESS=path, else `fastchess` on PATH, else
# /tmp/fastchess-src/fastchess) it plays the same match right after arbiter at each time
# control: same engines and options, same openings (the starting position, or OPENINGS),
# same clocks, concurrency 2, -rounds GAMES/2 -games 2 -repeat, timemargin = arbiter's
# --margin-ms (MARGIN, 50 ms). Both PGNs are counted the same way (plies of the movetext, book
# moves excluded; time losses = [Termination "time forfeit"]) and both runs are timed by
# this script, then one line per time control:
#   0.2+0.002: arbiter N plies/s (T time losses), fastchess M plies/s (T time losses), ratio N/M
# ROUNDS=n repeats each pair of runs n times, alternating which program goes first, and
# prints medians of plies/s (time losses summed). fastchess's own CPU per move is sampled
# from /proc every 0.2 s (its threads, not the engines; the last < 0.2 s is missed).
#
#   bench/match_overhead.sh [GAMES]            # default 200 games at 0.2+0.002, GAMES/2 at 1+0.01
#   LONG_GAMES=200 bench/match_overhead.sh     # games at 1+0.01 (default GAMES/2)
#   ROUNDS=3 bench/match_overhead.sh           # alternate arbiter/fastchess 3 times, medians
#   FASTCHESS=none bench/match_overhead.sh     # arbiter only
#   OPENINGS=bench/strength/openings.epd ...   # EPD or PGN book for both (default: start position)
#   MEMORY_GAMES=10000 bench/match_overhead.sh # also: RSS over 10,000 short test-engine games
#   SANDBOX=namespaces bench/match_overhead.sh # engines in the sandbox (--sandbox; default off)
set -euo pipefail
# Paths given relative to where the script was called from.
resolve() { case "$1" in ""|none|/*) echo "$1" ;; */*) echo "$PWD/$1" ;; *) echo "$1" ;; esac; }
FASTCHESS=$(resolve "${FASTCHESS:-}")
OPENINGS=$(resolve "${OPENINGS:-}")
cd "$(dirname "$0")/.."
GAMES=${1:-200}
LONG_GAMES=${LONG_GAMES:-$((GAMES / 2))}
ROUNDS=${ROUNDS:-1}
MARGIN=${MARGIN:-50}
ARBITER=${ARBITER:-build/cli/arbiter}
STOCKFISH=${STOCKFISH:-/usr/games/stockfish}
TEST_ENGINE=${TEST_ENGINE:-build/tests/fake_engines/arbiter_fake_uci_engine}
PGN_EXTRACT=$(command -v pgn-extract || echo /usr/games/pgn-extract)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
[ -x "$ARBITER" ] || { echo "build arbiter first (ninja -C build)"; exit 1; }
if [ -z "$FASTCHESS" ]; then
  FASTCHESS=$(command -v fastchess || true)
  [ -n "$FASTCHESS" ] || [ ! -x /tmp/fastchess-src/fastchess ] || FASTCHESS=/tmp/fastchess-src/fastchess
fi
[ "$FASTCHESS" != none ] || FASTCHESS=
[ -z "$FASTCHESS" ] || [ -x "$FASTCHESS" ] || { echo "FASTCHESS=$FASTCHESS is not executable"; exit 1; }
ARB_BOOK=() FC_BOOK=()
if [ -n "$OPENINGS" ]; then
  ARB_BOOK=(--openings "$OPENINGS")
  FC_BOOK=(-openings "file=$OPENINGS" "format=${OPENINGS##*.}" order=sequential)
fi

# plies (movetext moves, "{book}" moves excluded), time losses, games of a PGN file
count_pgn() {
  python3 - "$1" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
games = [g for g in re.split(r'(?m)^(?=\[Event )', text) if g.strip()]
token = re.compile(r'\{[^}]*\}|;[^\n]*|\([^)]*\)|\S+')
plies = losses = 0
for g in games:
    if re.search(r'(?m)^\[Termination "time forfeit"\]', g):
        losses += 1
    moves = "\n".join(l for l in g.splitlines() if not l.startswith("["))
    for t in token.findall(moves):
        if t.startswith("{"):
            if t[1:].strip().startswith("book"):
                plies -= 1
            continue
        if t[0] in ";($" or t in ("1-0", "0-1", "1/2-1/2", "*"):
            continue
        t = re.sub(r'^\d+\.+', '', t)
        if t:
            plies += 1
print(plies, losses, len(games))
EOF
}

check_pgn() {  # pgn
  if "$PGN_EXTRACT" --quiet -o /dev/null "$1" 2> "$OUT/pgn-extract.err" &&
     [ ! -s "$OUT/pgn-extract.err" ]; then
    echo "pgn-extract: $(grep -c '^\[Event ' "$1") games read without complaint"
  else
    echo "pgn-extract complained:"; head "$OUT/pgn-extract.err"
  fi
}

# Appends "plies seconds time-losses games cpu-ms-per-move" to $OUT/<tc>.<program>.
record() {  # program tc pgn seconds cpu-ms-per-move
  local counts
  counts=$(count_pgn "$3")
  echo "$counts" | awk -v s="$4" -v c="$5" '{ print $1, s, $2, $3, c }' >> "$OUT/$2.$1"
  echo "$1: $(echo "$counts" | awk -v s="$4" -v c="$5" \
    '{ printf "%d plies in %.1f s = %.1f plies/s, %d time losses in %d games, own CPU %s ms/move", $1, s, $1 / s, $2, $3, c }')"
}

run() {  # name tc extra-engine-args...
  local name=$1 tc=$2
  shift 2
  local pgn="$OUT/$name.pgn" json="$OUT/$name.json" t0=$EPOCHREALTIME
  rm -f "$pgn"  # --pgn-out appends
  echo "== $name: $GAMES games at $tc, concurrency 2"
  "$ARBITER" match "$@" --tc "$tc" --games "$GAMES" --concurrency 2 --pgn-out "$pgn" \
      --margin-ms "$MARGIN" --sandbox "${SANDBOX:-off}" "${ARB_BOOK[@]}" --json --quiet > "$json"
  local seconds
  seconds=$(echo "$t0 $EPOCHREALTIME" | awk '{ printf "%.3f", $2 - $1 }')
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
  check_pgn "$pgn"
  [[ $name != sf-* ]] ||
    record arbiter "$tc" "$pgn" "$seconds" "$(python3 -c 'import json, sys
print("%.3f" % json.load(open(sys.argv[1]))["cpu_ms_per_move"])' "$json")"
}

SF_FC=("cmd=$STOCKFISH" option.Hash=16 option.Threads=1)
run_fastchess() {  # tc
  local tc=$1 pgn="$OUT/fastchess-$1.pgn" log="$OUT/fastchess-$1.log"
  rm -f "$pgn"
  echo "== fastchess: $GAMES games at $tc, concurrency 2"
  local t0=$EPOCHREALTIME pid spid rc=0 seconds
  (cd "$OUT" && exec "$FASTCHESS" -engine name=sf-a "${SF_FC[@]}" -engine name=sf-b "${SF_FC[@]}" \
      -each "tc=$tc" "timemargin=$MARGIN" -rounds $((GAMES / 2)) -games 2 -repeat \
      -concurrency 2 "${FC_BOOK[@]}" -pgnout "file=$pgn" > "$log" 2>&1) &
  pid=$!
  echo 0 > "$OUT/ticks"
  (  # fastchess's own utime + stime (all its threads, not the engines) every 0.2 s
    while read -r -a stat 2> /dev/null < "/proc/$pid/stat"; do
      echo $((stat[13] + stat[14])) > "$OUT/ticks"
      sleep 0.2
    done
  ) &
  spid=$!
  wait "$pid" || rc=$?
  seconds=$(echo "$t0 $EPOCHREALTIME" | awk '{ printf "%.3f", $2 - $1 }')
  kill "$spid" 2> /dev/null || true
  wait "$spid" 2> /dev/null || true
  [ "$rc" = 0 ] || { echo "fastchess exited with $rc:"; tail -5 "$log"; }
  check_pgn "$pgn"
  local plies
  plies=$(count_pgn "$pgn" | cut -d' ' -f1)
  record fastchess "$tc" "$pgn" "$seconds" \
    "$(awk -v t="$(cat "$OUT/ticks")" -v hz="$(getconf CLK_TCK)" -v p="$plies" \
      'BEGIN { printf "%.3f", p ? t * 1000 / hz / p : 0 }')"
}

SF="cmd=$STOCKFISH,option.Hash=16,option.Threads=1"
for tc in 0.2+0.002 1+0.01; do
  games=$GAMES
  [ "$tc" = 0.2+0.002 ] || games=$LONG_GAMES
  for ((r = 1; r <= ROUNDS; r++)); do
    [ "$ROUNDS" = 1 ] || echo "-- $tc round $r of $ROUNDS"
    if [ -n "$FASTCHESS" ] && ((r % 2 == 0)); then GAMES=$games run_fastchess "$tc"; fi
    GAMES=$games run "sf-$tc" "$tc" --engine "name=sf-a,$SF" --engine "name=sf-b,$SF"
    if [ -n "$FASTCHESS" ] && ((r % 2 == 1)); then GAMES=$games run_fastchess "$tc"; fi
  done
done

echo "== summary (concurrency 2, Stockfish vs itself, ${OPENINGS:-start position}, $ROUNDS round(s); plies/s = median)"
for tc in 0.2+0.002 1+0.01; do
  python3 - "$tc" "$OUT/$tc.arbiter" "$OUT/$tc.fastchess" <<'EOF'
import os, statistics, sys
def load(path):
    if not os.path.exists(path):
        return None
    rows = [l.split() for l in open(path) if l.strip()]
    rate = statistics.median(int(r[0]) / float(r[1]) for r in rows)
    cpu = statistics.median(float(r[4]) for r in rows)
    return rate, sum(int(r[2]) for r in rows), sum(int(r[3]) for r in rows), cpu
tc, a, f = sys.argv[1], load(sys.argv[2]), load(sys.argv[3])
line = f"{tc}: arbiter {a[0]:.0f} plies/s ({a[1]} time losses)"
if f:
    line += f", fastchess {f[0]:.0f} plies/s ({f[1]} time losses), ratio {a[0] / f[0]:.3f}"
line += f"; {a[2]} games{' each' if f else ''}; arbiter CPU {a[3]:.3f} ms/move"
if f:
    line += f", fastchess CPU {f[3]:.3f} ms/move (sampled)"
print(line)
EOF
done
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
