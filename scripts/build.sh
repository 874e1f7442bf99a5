#!/usr/bin/env bash
# Configures and builds arbiter (Release).
# Usage: scripts/build.sh [--native | --march=LEVEL] [--debug] [--asan | --tsan] [BUILD_DIR]
#   --asan          AddressSanitizer + UndefinedBehaviorSanitizer (default dir build-asan)
#   --tsan          ThreadSanitizer (default dir build-tsan)
#   (sanitizer builds do not turn warnings into errors: GCC 12 warns falsely under them)
#   --native        tune everything for this CPU (-march=native). Not needed for perft speed:
#                   the default build (x86-64-v2: hardware popcount) carries the perft counter
#                   for x86-64-v2, -v3 (PEXT) and -v4 (AVX-512) and runs the best the CPU has.
#   --march=LEVEL   everything for one named level, e.g. x86-64 (CPUs older than 2009) or
#                   x86-64-v3; the binary then runs only on such CPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
native=OFF
march=""
type=Release
sanitize=""
dir=""
for arg in "$@"; do
  case "$arg" in
    --native) native=ON ;;
    --march=*) march="${arg#--march=}" ;;
    --debug) type=Debug ;;
    --asan) sanitize=address ;;
    --tsan) sanitize=thread ;;
    *) dir="$arg" ;;
  esac
done
if [[ -z "$dir" ]]; then
  case "$sanitize" in
    address) dir=build-asan ;;
    thread) dir=build-tsan ;;
    *) [[ $native == ON ]] && dir=build-native || dir=build ;;
  esac
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="$type" -DARBITER_NATIVE="$native" \
  -DARBITER_MARCH="$march" -DARBITER_SANITIZE="$sanitize" \
  -DARBITER_WERROR="$([[ -n $sanitize ]] && echo OFF || echo ON)" >/dev/null
cmake --build "$dir" -j "$(nproc)"
