#!/usr/bin/env bash
# Single-thread, no-hash perft: arbiter vs Debian's Stockfish 15.1 (`go perft N`), run
# alternately in the same session, on the start position (depth 7) and Kiwipete (depth 6).
# Prints nodes/s of each from CPU time (least distorted on a shared machine) and from wall
# time, and arbiter's ratio. Usage: bench/perft_vs_stockfish.sh [ROUNDS] [ARBITER_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-2}"
ARBITER="${2:-build-native/cli/arbiter}"
STOCKFISH="${STOCKFISH:-/usr/games/stockfish}"
[[ -x "$ARBITER" ]] || scripts/build.sh --native >/dev/null
[[ -x "$STOCKFISH" ]] || { echo "stockfish not found at $STOCKFISH (apt-get install stockfish)"; exit 2; }
exec python3 - "$ROUNDS" "$ARBITER" "$STOCKFISH" <<'PY'
import re, resource, subprocess, sys, time

rounds, arbiter, stockfish = int(sys.argv[1]), sys.argv[2], sys.argv[3]
POSITIONS = [
    ("startpos", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 7),
    ("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 6),
]

def run(cmd, stdin=None):
    """Runs cmd; returns (nodes, cpu seconds of the child, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    out = subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=True).stdout
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    nodes = int(re.search(r"Nodes searched: (\d+)", out).group(1))
    return nodes, cpu, wall

indexing = re.search(r"(pext|magic)", subprocess.run([arbiter, "perft", "--startpos", "--depth", "1"],
                     capture_output=True, text=True).stdout).group(1)
print(f"arbiter ({indexing} sliders) vs {stockfish} (Stockfish 15.1), 1 thread, no hash, {rounds} rounds")
for name, fen, depth in POSITIONS:
    tot = {"arbiter": [0, 0.0, 0.0], "stockfish": [0, 0.0, 0.0]}
    for _ in range(rounds):
        for who in ("arbiter", "stockfish"):
            if who == "arbiter":
                n, c, w = run([arbiter, "perft", "--fen", fen, "--depth", str(depth), "--threads", "1"])
            else:
                n, c, w = run([stockfish], f"position fen {fen}\ngo perft {depth}\nquit\n")
            tot[who][0] += n; tot[who][1] += c; tot[who][2] += w
    a, s = tot["arbiter"], tot["stockfish"]
    if a[0] != s[0]:
        sys.exit(f"{name}: node counts differ: arbiter {a[0]}, stockfish {s[0]}")
    print(f"{name} depth {depth}: {a[0] // rounds} nodes")
    print(f"  by CPU time : arbiter {a[0]/a[1]/1e6:8.1f} Mnps  stockfish {s[0]/s[1]/1e6:8.1f} Mnps  ratio {s[1]/a[1]:5.2f}x")
    print(f"  by wall time: arbiter {a[0]/a[2]/1e6:8.1f} Mnps  stockfish {s[0]/s[2]/1e6:8.1f} Mnps  ratio {s[2]/a[2]:5.2f}x")
PY
