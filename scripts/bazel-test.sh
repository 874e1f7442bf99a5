#!/usr/bin/env bash
# The Bazel build and test, offline, with the system's libraries (Debian's bazel-bootstrap 4.2.3).
# Usage: scripts/bazel-test.sh [BAZEL FLAGS...] [TARGETS...]   (default target //...: every
# target and every test not tagged slow; slow ones run when named, e.g.
# //tests/engine:perft_deep_test). Example on a busy machine: scripts/bazel-test.sh --jobs=1
# CI does not need this: it builds with CMake (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/check-bazel-sync.sh
scripts/install-bazel.sh
args=("$@")
has_target=0
for a in "${args[@]}"; do [[ "$a" == -* ]] || has_target=1; done
((has_target)) || args+=(//...)
bazel test "${args[@]}"
