#!/usr/bin/env bash
# Installs Debian's Bazel (bazel-bootstrap 4.2.3) for the optional offline Bazel build.
# Not in install-deps.sh's own list: CI builds with CMake and does not need Bazel.
# The C++ rules come from the repo's bazel/ stubs, which forward to Bazel's native rules,
# so no rules packages or downloads are needed. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh bazel-bootstrap
