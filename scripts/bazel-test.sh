#!/usr/bin/env bash
# The Bazel build and test, offline, with the system's libraries (Debian's bazel-bootstrap 4.2.3).
# Usage: scripts/bazel-test.sh [TARGETS...]   (default //...: every target and every test not
# tagged slow; slow ones run when named, e.g. //tests/engine:perft_deep_test).
# CI does not need this: it builds with CMake (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-bazel.sh
targets=("$@")
((${#targets[@]})) || targets=(//...)
bazel test "${targets[@]}"
