#!/usr/bin/env bash
# Stockfish built from source on two workers, played against the installed binary: the cluster
# path of `source=` engines with a real engine. A coordinator and two `arbiter worker` processes
# (each with its own build cache, --sandbox auto) on loopback; the tree is packed and uploaded by
# the client, and each worker builds it in its engine box for its own CPU level. Prints each
# worker's build time, the time of a second match (the builds cached), and both workers' bench
# signatures (the declared one is the installed binary's: a build that disagrees is refused).
#
# SRC is a Stockfish source tree of the installed version: Debian's (`apt-get source stockfish`
# with a deb-src line) or upstream's tag (sf_15.1 for Debian 12). Stockfish downloads its network
# at build time, and the box has no network: when SRC lacks the file evaluate.h names, it is
# exported from the installed binary (`export_net`) into a copy of the tree and checked against
# the hash in its name.
# Usage: bench/source_stockfish.sh SRC [BUILD_DIR]   (env: GAMES=8 TC=10+0.1 STOCKFISH=/usr/games/stockfish)
set -euo pipefail
cd "$(dirname "$0")/.."
src="${1:?usage: bench/source_stockfish.sh SRC [BUILD_DIR]}"
arbiter="$PWD/${2:-build}/cli/arbiter"
stockfish="${STOCKFISH:-/usr/games/stockfish}"
games="${GAMES:-8}"  # 8 and more: at least two jobs, so that both workers build
tc="${TC:-10+0.1}"
[[ -x "$arbiter" ]] || { echo "build first: $arbiter not found" >&2; exit 1; }
[[ -x "$stockfish" ]] || { echo "no $stockfish (apt-get install stockfish)" >&2; exit 1; }
[[ -f "$src/src/evaluate.h" ]] || { echo "$src is not a Stockfish source tree (no src/evaluate.h)" >&2; exit 1; }
work=$(mktemp -d)
chmod 0755 "$work"  # a root worker's engines run as nobody, and reach their binaries through it
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

net=$(sed -n 's/.*EvalFileDefaultName *"\(nn-[0-9a-f]*\.nnue\)".*/\1/p' "$src/src/evaluate.h")
tree="$src"
if [[ -n "$net" && ! -f "$src/src/$net" ]]; then
  tree="$work/tree"
  cp -r "$src" "$tree"
  printf 'export_net %s\nquit\n' "$tree/src/$net" | "$stockfish" >/dev/null
  hash=$(sha256sum "$tree/src/$net" | cut -c1-12)
  [[ "$net" == "nn-$hash.nnue" ]] || { echo "the installed Stockfish's net is not $net: versions differ" >&2; exit 1; }
  echo "source-stockfish: $net exported from $stockfish"
fi
signature=$("$stockfish" bench 2>&1 | sed -n 's/^Nodes searched *: *\([0-9]*\).*/\1/p')
echo "source-stockfish: $("$stockfish" </dev/null | head -1); bench $signature"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
addr="127.0.0.1:$port"
"$arbiter" coordinator --no-auth --listen "$addr" --data "$work/data" >"$work/coordinator.log" 2>&1 &
pids+=($!)
until "$arbiter" workers --coordinator "$addr" >/dev/null 2>&1; do sleep 0.2; done
for i in 1 2; do
  "$arbiter" worker --coordinator "$addr" --name "w$i" --cache "$work/w$i" --threads 1 \
    --sandbox auto --engine-dir "$(dirname "$stockfish")" >"$work/w$i.log" 2>&1 &
  pids+=($!)
done
until [[ $("$arbiter" workers --coordinator "$addr" 2>/dev/null | grep -c 'builds: yes') == 2 ]]; do sleep 0.2; done
"$arbiter" workers --coordinator "$addr" | sed 's/^/source-stockfish:   /'

# Stockfish's ARCH names for the worker's level (no commas: they separate the spec's fields).
build='make -C src -j2 build ARCH=$(case $ARBITER_CPU_LEVEL in v4) echo x86-64-avx512;; v3) echo x86-64-bmi2;; v2) echo x86-64-sse41-popcnt;; *) echo x86-64;; esac)'
match() {
  "$arbiter" match --coordinator "$addr" --quiet \
    --engine "name=sf-source,source=$tree,build=$build,binary=src/stockfish,bench=$signature" \
    --engine "name=sf-installed,cmd=$stockfish,bench=$signature" \
    --tc "$tc" --games "$1" --pgn "$work/$2.pgn" >"$work/$2.out" 2>&1 ||
    { cat "$work/$2.out" >&2; exit 1; }
}
start=$SECONDS
match "$games" first
first=$((SECONDS - start))
sed -n 's/^Games: /source-stockfish: first match: /p' "$work/first.out"
for i in 1 2; do
  echo "source-stockfish: w$i: $(grep -o 'built source .*' "$work/w$i.log" | sed 's/(.make.*)/(...)/' || echo 'no build')"
done
built() { cat "$work"/w[12].log | grep -c 'built source' || true; }
before=$(built)
start=$SECONDS
match 4 second
echo "source-stockfish: first match $first s (builds included); second match of 4 games $((SECONDS - start)) s with $(($(built) - before)) new builds (the binaries came from the workers' caches)"
"$arbiter" runs show 1 --coordinator "$addr" | grep -E '^Engine|bench' | sed 's/^/source-stockfish:   /'
# The declared signature off by one: each worker measures its own build and refuses it.
if "$arbiter" match --coordinator "$addr" --quiet \
    --engine "name=sf-source,source=$tree,build=$build,binary=src/stockfish,bench=$((signature - 1))" \
    --engine "name=sf-installed,cmd=$stockfish" --tc "$tc" --games 2 >"$work/wrong.out" 2>&1; then
  echo "source-stockfish: FAILED: a wrong declared bench was accepted" >&2; exit 1
fi
echo "source-stockfish: declared bench $((signature - 1)): $(grep -o 'every connected worker refused.*' "$work/wrong.out" | cut -c1-160)"
for i in 1 2; do
  echo "source-stockfish: w$i measured: $(grep -o 'bench signature [0-9]* differs' "$work/w$i.log" | head -1)"
done
