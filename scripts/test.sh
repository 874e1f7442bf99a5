#!/usr/bin/env bash
# The test command: installs dependencies (apt), builds the default Release build, runs the
# default test set (everything but the "slow" label). Deep checks: ctest --test-dir build -L slow
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
ctest --test-dir build -LE slow --output-on-failure -j 2 --timeout 900
