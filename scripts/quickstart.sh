#!/usr/bin/env bash
# The main job on one machine: installs dependencies, builds (tuned for this CPU), and runs a
# perft of the start position with divide and speed on all cores.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh --native
DEPTH="${DEPTH:-7}"
build-native/cli/arbiter perft --startpos --depth "$DEPTH" --divide --threads 0 --hash 256
