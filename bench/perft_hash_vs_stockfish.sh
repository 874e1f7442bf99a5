#!/usr/bin/env bash
# Start-position perft(8) with the hash and every core (arbiter) against Stockfish 15.1's
# perft(8) (single thread; Stockfish's perft has no hash). Stockfish's perft(8) takes minutes,
# so by default its time is extrapolated from its perft(7) speed measured in the same run
# (perft speed is flat between depths 7 and 8); FULL=1 runs its perft(8) for real.
# DEPTH9=1 also times arbiter's perft(9). Usage: bench/perft_hash_vs_stockfish.sh [HASH_MB]
set -euo pipefail
cd "$(dirname "$0")/.."
HASH="${1:-1024}"
ARBITER="${ARBITER:-build/cli/arbiter}"
STOCKFISH="${STOCKFISH:-/usr/games/stockfish}"
[[ -x "$ARBITER" ]] || scripts/build.sh >/dev/null
exec python3 - "$ARBITER" "$STOCKFISH" "$HASH" "${FULL:-0}" "${DEPTH9:-0}" <<'PY'
import os, re, resource, subprocess, sys, time
arbiter, stockfish, hash_mb, full, depth9 = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5] == "1"
def run(cmd, stdin=None):
    b = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.monotonic()
    out = subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=True).stdout
    w = time.monotonic() - t0; a = resource.getrusage(resource.RUSAGE_CHILDREN)
    return int(re.search(r"Nodes searched: (\d+)", out).group(1)), a.ru_utime - b.ru_utime + a.ru_stime - b.ru_stime, w
cores = os.cpu_count()
n8, cpu8, wall8 = run([arbiter, "perft", "--startpos", "--depth", "8", "--threads", "0", "--hash", hash_mb])
assert n8 == 84998978956, n8
if full:
    sn, scpu, swall = run([stockfish], "go perft 8\nquit\n"); how = "measured"
else:
    sn7, scpu7, swall7 = run([stockfish], "go perft 7\nquit\n")
    scpu, swall = scpu7 * n8 / sn7, swall7 * n8 / sn7; how = "extrapolated from its perft(7)"
print(f"start position perft(8) = {n8}")
print(f"  arbiter  ({cores} threads, hash {hash_mb} MB): wall {wall8:7.1f} s  cpu {cpu8:7.1f} s")
print(f"  stockfish (1 thread, {how}): wall {swall:7.1f} s  cpu {scpu:7.1f} s")
print(f"  speed-up: wall {swall / wall8:5.1f}x   cpu {scpu / cpu8:5.1f}x  (wall is distorted when the machine is shared)")
if depth9:
    n9, cpu9, wall9 = run([arbiter, "perft", "--startpos", "--depth", "9", "--threads", "0", "--hash", hash_mb])
    assert n9 == 2439530234167, n9
    print(f"start position perft(9) = {n9}: wall {wall9:.1f} s, cpu {cpu9:.1f} s")
PY
