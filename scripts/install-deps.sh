#!/usr/bin/env bash
# Installs the Debian 12 packages arbiter needs to build, test, benchmark and lint
# (clang-format and clang-tidy 14 for scripts/format.sh and scripts/lint.sh).
# Idempotent: packages already present are left alone. Extra package names given as arguments
# are installed too (scripts/install-bazel.sh adds Bazel that way).
set -euo pipefail
PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev prometheus-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev libspdlog-dev libcli11-dev libseccomp-dev libre2-dev
  stockfish fairymax phalanx pgn-extract python3 curl openssl zstd
  clang-format clang-tidy clang libclang-rt-14-dev bubblewrap
  libcivetweb-dev chromium chromium-driver python3-selenium
  prometheus iproute2
  "$@"
)
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
