#!/usr/bin/env bash
# Single-thread, no-hash perft: arbiter's default (portable) build and its --native build against
# Debian's Stockfish 15.1 (`go perft N`), run alternately in the same session, on the start
# position (depth 7) and Kiwipete (depth 6). Prints nodes/s of each from CPU time (least
# distorted on a shared machine) and from wall time, the ratios, and the issue's targets: the
# default build within 3 % of the native one (it carries the v2/v3/v4 copies of the counting core
# and runs the best this CPU has), and >= 1,500 Mnodes/s and >= 6x Stockfish on startpos perft(7).
# Usage: bench/perft_vs_stockfish.sh [ROUNDS] [NATIVE_BINARY] [DEFAULT_BINARY]
#   (ROUNDS default 2; binaries default build-native/cli/arbiter, build/cli/arbiter, each built
#   when missing; DEFAULT_BINARY=none measures the native build alone.)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-2}"
NATIVE="${2:-build-native/cli/arbiter}"
DEFAULT="${3:-build/cli/arbiter}"
STOCKFISH="${STOCKFISH:-/usr/games/stockfish}"
[[ -x "$NATIVE" ]] || scripts/build.sh --native >/dev/null
[[ "$DEFAULT" == none || -x "$DEFAULT" ]] || scripts/build.sh >/dev/null
[[ -x "$STOCKFISH" ]] || { echo "stockfish not found at $STOCKFISH (apt-get install stockfish)"; exit 2; }
exec python3 - "$ROUNDS" "$NATIVE" "$DEFAULT" "$STOCKFISH" <<'PY'
import re, resource, subprocess, sys, time

rounds, native, default, stockfish = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
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

def path_of(binary):
    out = subprocess.run([binary, "perft", "--startpos", "--depth", "1"], capture_output=True,
                         text=True, check=True).stdout
    return re.search(r"(v\d \([^)]*\))", out).group(1)

arbiters = {"native": native}
if default != "none":
    arbiters["default"] = default
who_all = list(arbiters) + ["stockfish"]
print(f"1 thread, no hash, {rounds} rounds alternating; CPU time")
for name, binary in arbiters.items():
    print(f"  arbiter {name:7}: {binary}, perft path {path_of(binary)}")
print(f"  stockfish      : {stockfish} (Stockfish 15.1)")
rates = {}
for name, fen, depth in POSITIONS:
    tot = {w: [0, 0.0, 0.0] for w in who_all}
    for _ in range(rounds):
        for who in who_all:
            if who == "stockfish":
                n, c, w = run([stockfish], f"position fen {fen}\ngo perft {depth}\nquit\n")
            else:
                n, c, w = run([arbiters[who], "perft", "--fen", fen, "--depth", str(depth),
                               "--threads", "1"])
            tot[who][0] += n; tot[who][1] += c; tot[who][2] += w
    counts = {tot[w][0] for w in who_all}
    if len(counts) != 1:
        sys.exit(f"{name}: node counts differ: " + ", ".join(f"{w} {tot[w][0]}" for w in who_all))
    print(f"{name} depth {depth}: {tot['stockfish'][0] // rounds} nodes")
    for w in who_all:
        n, c, wall = tot[w]
        rates[(name, w)] = n / c / 1e6
        print(f"  {w:9}: {n/c/1e6:8.1f} Mnps by CPU time, {n/wall/1e6:8.1f} by wall time, "
              f"{tot['stockfish'][1]/c:5.2f}x stockfish")
    if "default" in arbiters:
        print(f"  default/native: {rates[(name, 'default')] / rates[(name, 'native')]:5.3f}")
start = rates[("startpos", "native")]
best = max(rates[("startpos", w)] for w in arbiters)
print(f"target: startpos perft(7) >= 1500 Mnps per thread: {best:.0f} "
      f"({'met' if best >= 1500 else 'not met'})")
sf = rates[("startpos", "stockfish")]
print(f"target: >= 6x stockfish on startpos perft(7): {best / sf:.2f}x "
      f"({'met' if best / sf >= 6 else 'not met'})")
if "default" in arbiters:
    worst = min(rates[(p, "default")] / rates[(p, "native")] for p, _, _ in POSITIONS)
    print(f"target: default build within 3 % of native: worst position {worst:.3f} "
          f"({'met' if worst >= 0.97 else 'not met'})")
PY
