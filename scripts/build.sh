#!/usr/bin/env bash
# Configures and builds arbiter (Release). Usage: scripts/build.sh [--native] [--debug] [BUILD_DIR]
#   --native  tune for this CPU (-march=native; PEXT sliders on BMI2). Default: portable x86-64.
set -euo pipefail
cd "$(dirname "$0")/.."
native=OFF
type=Release
dir=""
for arg in "$@"; do
  case "$arg" in
    --native) native=ON ;;
    --debug) type=Debug ;;
    *) dir="$arg" ;;
  esac
done
[[ -z "$dir" ]] && { [[ $native == ON ]] && dir=build-native || dir=build; }
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="$type" -DARBITER_NATIVE="$native" >/dev/null
cmake --build "$dir" -j "$(nproc)"
