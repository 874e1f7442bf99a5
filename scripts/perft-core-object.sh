#!/usr/bin/env bash
# Renames apart one per-level copy of the perft counting core (engine/perft_core.cc compiled for
# x86-64-LEVEL): every global symbol it defines gets the suffix ".LEVEL", except its PerftPath
# (kPerftPathLEVEL, which engine/perft_path.cc calls). Without this the linker would keep one
# copy of each inline function (Position::DoMove, the move generator, ...) for the whole binary,
# whichever level it came from: v4 code on a v2 CPU, or v2 code in the v4 core.
# Usage: scripts/perft-core-object.sh LEVEL OUT.o IN.o
set -euo pipefail
level=$1 out=$2 in=$3
map=$(mktemp)
trap 'rm -f "$map"' EXIT
nm --defined-only --extern-only --format=posix "$in" | awk -v keep="kPerftPath$level" \
  -v suffix=".$level" 'index($1, keep) == 0 { print $1, $1 suffix }' >"$map"
grep -q . "$map" || { echo "perft-core-object: no symbols to rename in $in" >&2; exit 1; }
objcopy --redefine-syms="$map" "$in" "$out"
