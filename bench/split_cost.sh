#!/usr/bin/env bash
# The coordinator's cost of splitting start-position perft(DEPTH) for 2 workers with hashes of
# their own: merged at once (the reference: all of it before the first job) against in shards
# (the paths generated once, merged shard by shard while the first jobs go out), alternately in
# one process, ROUNDS times; prints each round and the least CPU and first-job times.
# DEPTH=9 splits at ply 6 (9.4 M positions): the reference merged at once then takes ~5 GB.
# Usage: bench/split_cost.sh [BUILD_DIR]   (env: DEPTH=8 ROUNDS=3)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
[[ -x "$BUILD/bench/arbiter_split_cost" ]] || { echo "build first (ninja -C $BUILD)" >&2; exit 1; }
"$BUILD/bench/arbiter_split_cost" "${DEPTH:-8}" "${ROUNDS:-3}"
