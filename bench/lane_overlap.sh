#!/usr/bin/env bash
# What two workers with tables of their own count twice in start-position perft(8), per plan
# (docs/scaling.md, "Lanes"): with perfect tables, the positions at each ply that
# the subtrees of both lanes reach, for the planner's lanes at ply 3 (workers filling the
# coordinator's cores), the best partition of those jobs found by annealing, and ply 4 or 5
# merged by the coordinator; then counted for real (one thread, CPU seconds, ROUNDS rounds): the
# ply-3 jobs into one table of HASH MB, the planned lanes into one each, ply 5 merged in halves
# into one each, and ply 5 merged by each worker for its own lane (a design, not built).
# DFS_LANES=1 measures instead the lanes of keys the planner uses where workers share the
# coordinator's cores (docs/scaling.md, "Lanes"): the engine's two lanes of keys
# over every ply-3 job, a table each, against the ply-3 jobs into one table and the planned lanes
# of jobs, and the walk of one lane down to its ply.
# Usage: bench/lane_overlap.sh [BUILD_DIR]   (env: HASH=128 ROUNDS=1 MODEL=1; MODEL=0 skips the
#   model and prints only the CPU rounds; DFS_LANES=1)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
[[ -x "$BUILD/bench/arbiter_lane_overlap" ]] || { echo "build first (ninja -C $BUILD)" >&2; exit 1; }
"$BUILD/bench/arbiter_lane_overlap" "${HASH:-128}" "${ROUNDS:-1}" "${MODEL:-1}"
