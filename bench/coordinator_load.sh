#!/usr/bin/env bash
# Coordinator load: WORKERS simulated workers (lightweight gRPC clients in one process) acquire,
# heartbeat and complete JOBS tiny perft jobs against one coordinator whose commits are durable
# (SQLite WAL, synchronous=FULL, group commits). Reports completions/s and CompleteJob latency.
# With PGN=FILE the run is a match: each job (2 game pairs) is completed with games of FILE,
# which the coordinator replays before counting them (e.g. the quickstart's PGN).
# AUTH=1 runs it with authentication (every call carries a bearer token and is checked); the
# default is --no-auth on loopback, so AUTH=0 and AUTH=1 in one sitting give the cost of the check.
# RUNS=N: one perft run (perft(5), 19,728 jobs) and N runs at once of mixed priority (-2..2;
# perft(4), 890 jobs each), jobs of the same shape, three alternating rounds on one coordinator;
# prints completions/s of both (from the last submission on) and the ratio (medians).
# Usage: bench/coordinator_load.sh [BUILD_DIR]
#   (env: WORKERS=1000 JOBS=20000 [PGN=games.pgn] [AUTH=1] [RUNS=100])
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
WORKERS="${WORKERS:-1000}"
JOBS="${JOBS:-20000}"
[[ -x "$BUILD/bench/arbiter_coordinator_load" ]] || { echo "build first (ninja -C $BUILD)" >&2; exit 1; }
data=$(mktemp -d)
log=$(mktemp)
auth=(--no-auth)
if [[ "${AUTH:-0}" == 1 ]]; then
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$data.token"
  auth=(--admin-token-file "$data.token")
  export ARBITER_TOKEN_FILE="$data.token"
fi
mkdir -p "$data"
"$BUILD/cli/arbiter" coordinator --listen 127.0.0.1:0 --data "$data" --lease-s 30 \
  --max-active-runs 1000 --max-submissions-per-minute 100000 "${auth[@]}" >"$log" 2>"$log.err" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$data" "$data.token" "$log" "$log.err"' EXIT
for _ in $(seq 100); do grep -q "listening on port" "$log" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$log")
RUNS="${RUNS:-1}" "$BUILD/bench/arbiter_coordinator_load" "127.0.0.1:$port" "$WORKERS" "$JOBS" 8 ${PGN:+"$PGN"}
