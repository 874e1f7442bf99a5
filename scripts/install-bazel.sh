#!/usr/bin/env bash
# Installs Debian's Bazel (bazel-bootstrap 4.2.3) for the optional offline Bazel build.
# Not part of install-deps.sh: CI builds with CMake and does not need Bazel.
# The C++ rules come from the repo's bazel/ stubs, which forward to Bazel's native rules,
# so no rules packages or downloads are needed. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
PACKAGES=(bazel-bootstrap)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
