#!/usr/bin/env bash
# The Bazel build and test, offline, with the system's libraries (Debian's bazel-bootstrap 4.2.3).
# CI runs it (.ci/run) after the CMake build and tests.
# Usage: scripts/bazel-test.sh [BAZEL FLAGS...] [TARGETS...]   (default target //...)
# //... builds every target; it runs every test but those tagged `slow` (the CMake label `slow`)
# or `cmake_only` (cluster_test and cluster_match_test, the longest integration tests, which CI
# runs through CMake), which .bazelrc's --test_tag_filters leaves out. Run them by name with the
# filter cleared:
#   scripts/bazel-test.sh --test_tag_filters= //tests/engine:perft_deep_test
# On a busy machine: scripts/bazel-test.sh --jobs=1
# Bazel's output tree lives under /var/tmp/arbiter-bazel-UID, not ~/.cache/bazel: the
# integration tests' workers run the engines they build (cli/arbiter, the fake engines) in the
# engine box as user nobody, who cannot enter a private home directory.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/check-bazel-sync.sh
scripts/install-bazel.sh
args=("$@")
has_target=0
for a in "${args[@]}"; do [[ "$a" == -* ]] || has_target=1; done
((has_target)) || args+=(//...)
bazel --output_user_root="/var/tmp/arbiter-bazel-$(id -u)" test "${args[@]}"
