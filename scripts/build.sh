#!/usr/bin/env bash
# Configures and builds arbiter (Release).
# Usage: scripts/build.sh [--native | --march=LEVEL] [--debug] [--asan | --tsan] [BUILD_DIR]
#   --asan          AddressSanitizer + UndefinedBehaviorSanitizer (default dir build-asan)
#   --tsan          ThreadSanitizer (default dir build-tsan)
#   (sanitizer builds do not turn warnings into errors: GCC 12 warns falsely under them)
#   --native        tune for this CPU (-march=native; PEXT sliders on BMI2, the AVX-512 perft
#                   counter where the CPU has it). Default: x86-64-v2 (hardware popcount, magic
#                   bitboards; --march=x86-64 for CPUs older than 2009).
#   --march=LEVEL   a named level for a cluster image, e.g. x86-64-v3 (PEXT) or icelake-server
#                   (PEXT + AVX-512 counter); the binary then runs only on such CPUs.
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
