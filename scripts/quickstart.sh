#!/usr/bin/env bash
# The main job on one machine: installs dependencies, builds (the default build, the one the tests
# use: its perft counter runs the best copy this CPU has, see engine/perft_path.h), starts an
# embedded cluster (`arbiter local`: coordinator + 2 workers on loopback), runs a distributed
# perft of the start position with divide on it, then a short SPRT match between two settings
# of the builtin engine, played by the same cluster's workers (`arbiter match --coordinator`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
ARBITER=build/cli/arbiter
DEPTH="${DEPTH:-7}"
ADDR="127.0.0.1:${PORT:-50051}"
PGN="${PGN:-/tmp/arbiter-quickstart.pgn}"
rm -f "$PGN"

LOCAL_LOG=$(mktemp)
"$ARBITER" local --workers 2 --threads 1 --listen "$ADDR" --http "127.0.0.1:${HTTP_PORT:-8080}" \
  >"$LOCAL_LOG" &
LOCAL_PID=$!
trap 'kill -INT $LOCAL_PID 2>/dev/null; wait $LOCAL_PID 2>/dev/null || true; rm -f "$LOCAL_LOG"' EXIT
for _ in $(seq 100); do
  grep -q "^dashboard:" "$LOCAL_LOG" && "$ARBITER" runs list --coordinator "$ADDR" >/dev/null 2>&1 && break
  sleep 0.1
done
cat "$LOCAL_LOG"
# The dashboard: a one-time link signs this machine's browser in as the local admin.
LINK=$(sed -n 's/^dashboard: \(http[^ ]*\).*/\1/p' "$LOCAL_LOG")
echo "== open the dashboard to watch both runs live: $LINK"
if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]] && command -v xdg-open >/dev/null; then
  xdg-open "$LINK" >/dev/null 2>&1 || true
fi

echo "== distributed perft($DEPTH) of the start position on arbiter local (2 workers)"
"$ARBITER" perft --startpos --depth "$DEPTH" --divide --hash 128 --coordinator "$ADDR"

echo "== SPRT on arbiter local: builtin engine, default vs a weaker knight value (stops when the SPRT decides)"
"$ARBITER" match --coordinator "$ADDR" \
  --engine "name=base,cmd=builtin" \
  --engine "name=weak-knight,cmd=builtin,option.KnightValueMg=200" \
  --tc 1+0.02 --games 200 --sprt elo0=0,elo1=50,alpha=0.05,beta=0.05 \
  --pgn "$PGN"

if [[ "${KEEP:-0}" == 1 ]]; then
  echo "== KEEP=1: the cluster and its dashboard stay up until Ctrl-C"
  wait $LOCAL_PID || true
fi
