#!/usr/bin/env bash
# Lanes by key, measured before building them (docs/scaling.md, "Rejected designs"): the
# workers' counting CPU for start-position perft(8) with ply 5 merged by the coordinator (the
# reference, what the planner does for workers with tables of their own) against ply 5 merged by
# the workers' tables, each of LANES workers counting the children of every ply-4 position whose
# key falls in its lane (by the whole position's key, and by the pieces of the side not to move).
# One thread, rounds alternating; prints each round's CPU and the ratios to the reference.
# Usage: bench/table_merge.sh [BUILD_DIR]   (env: HASH=128 LANES=2 ROUNDS=2)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
[[ -x "$BUILD/bench/arbiter_table_merge" ]] || { echo "build first (ninja -C $BUILD)" >&2; exit 1; }
"$BUILD/bench/arbiter_table_merge" "${HASH:-128}" "${LANES:-2}" "${ROUNDS:-2}"
