#!/usr/bin/env bash
# Bulk-counting perft on the six standard positions of the Chess Programming Wiki's "Perft
# Results" page (the set hqperft and most perft counters report), one thread, no hash: arbiter's
# default build against Debian's Stockfish 15.1 (`go perft`), alternately in one run, counts
# checked against each other. Prints Mnodes/s by CPU time per position, the suite total and the
# ratio. Usage: bench/perft_positions.sh [ROUNDS] [ARBITER_BINARY] (defaults 1, build/cli/arbiter)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-1}"
ARBITER="${2:-build/cli/arbiter}"
STOCKFISH="${STOCKFISH:-/usr/games/stockfish}"
[[ -x "$ARBITER" ]] || scripts/build.sh >/dev/null
[[ -x "$STOCKFISH" ]] || { echo "stockfish not found at $STOCKFISH (apt-get install stockfish)"; exit 2; }
exec python3 - "$ROUNDS" "$ARBITER" "$STOCKFISH" <<'PY'
import re, resource, subprocess, sys

rounds, arbiter, stockfish = int(sys.argv[1]), sys.argv[2], sys.argv[3]
POSITIONS = [  # name, FEN, depth (each a few seconds for arbiter)
    ("1 start", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 7),
    ("2 kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 6),
    ("3 endgame", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 8),
    ("4 mirrored", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 6),
    ("5 promotions", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 6),
    ("6 middlegame", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 6),
]

def run(cmd, stdin=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return int(re.search(r"Nodes searched: (\d+)", out).group(1)), cpu, out

path = re.search(r"(v\d \([^)]*\))", run([arbiter, "perft", "--startpos", "--depth", "1"])[2]).group(1)
print(f"arbiter {arbiter} (perft path {path}) vs {stockfish}; 1 thread, no hash, {rounds} round(s)")
print(f"{'position':14} {'depth':>5} {'nodes':>14} {'arbiter Mnps':>13} {'stockfish Mnps':>15} {'ratio':>6}")
total = {"a": [0, 0.0], "s": [0, 0.0]}
for name, fen, depth in POSITIONS:
    a_n = a_c = s_n = s_c = 0
    for _ in range(rounds):
        n, c, _ = run([arbiter, "perft", "--fen", fen, "--depth", str(depth), "--threads", "1"])
        a_n += n; a_c += c
        n, c, _ = run([stockfish], f"position fen {fen}\ngo perft {depth}\nquit\n")
        s_n += n; s_c += c
    if a_n != s_n:
        sys.exit(f"{name}: counts differ: arbiter {a_n // rounds}, stockfish {s_n // rounds}")
    total["a"][0] += a_n; total["a"][1] += a_c; total["s"][0] += s_n; total["s"][1] += s_c
    print(f"{name:14} {depth:>5} {a_n // rounds:>14,} {a_n / a_c / 1e6:>13.1f} {s_n / s_c / 1e6:>15.1f} "
          f"{s_c / a_c:>5.2f}x")
a, s = total["a"], total["s"]
print(f"{'suite total':14} {'':>5} {a[0] // rounds:>14,} {a[0] / a[1] / 1e6:>13.1f} "
      f"{s[0] / s[1] / 1e6:>15.1f} {s[1] / a[1]:>5.2f}x")
PY
