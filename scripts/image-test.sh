#!/usr/bin/env bash
# Runs the image as a cluster in containers (podman, runc): a coordinator container and two
# worker containers on a podman network, each as the image's non-root user (uid 10001) with a
# read-only root filesystem, writable only where the manifests give a volume; authentication
# on (an admin token mounted as a file, a worker token each, made through the published port).
# From the host, through the published port: a perft(6) (exact: 119060324) and a builtin-engine
# SPRT match whose PGN is read back (games = W + D + L = PGN games, pgn-extract accepts it).
# Usage: scripts/image-test.sh [TAG]   (default dev; build it with scripts/image.sh TAG)
# Environment: ARBITER (the host's CLI, default build/cli/arbiter), ARBITER_CACHE.
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-dev}"
image="arbiter:$tag"
cache="${ARBITER_CACHE:-$HOME/.cache/arbiter}"
export CONTAINERS_CONF="$cache/containers.conf"
cli="${ARBITER:-build/cli/arbiter}"
[[ -x "$cli" ]] || { echo "image-test: no $cli (scripts/build.sh first, or ARBITER=...)" >&2; exit 2; }
podman image exists "$image" || { echo "image-test: no image $image (scripts/image.sh $tag)" >&2; exit 2; }
run=(--runtime runc --ulimit nofile=20000:20000 --ulimit nproc=4096:4096)
id=$$
net="arbiter-test-$id"
dir=$(mktemp -d)
coord="arbiter-coordinator-$id"
kube_pods=()
cleanup() {
  podman rm -f -t 5 "$coord" "arbiter-w1-$id" "arbiter-w2-$id" >/dev/null 2>&1 || true
  for p in "${kube_pods[@]}"; do podman pod rm -f -t 5 "$p" >/dev/null 2>&1 || true; done
  podman network rm -f "$net" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "image-test: FAILED: $*" >&2; for c in "$coord" "arbiter-w1-$id" "arbiter-w2-$id"; do
  echo "--- $c:" >&2; podman logs --tail 15 "$c" >&2 || true; done; exit 1; }
ok() { echo "image-test: ok: $*"; }
# Polls "$@" until it succeeds, at most $deadline seconds.
until_ok() { local deadline=$1; shift; local end=$((SECONDS + deadline));
  until "$@" >/dev/null 2>&1; do ((SECONDS < end)) || return 1; sleep 0.5; done; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
secret_file() {  # a token file the container's user can read, and nobody else
  chown 10001:10001 "$1"; chmod 0400 "$1"
}

podman network create "$net" >/dev/null
# Writable directories of the containers' user (podman 4.3 ignores tmpfs modes on directories the
# image has): the data volume and the workers' emptyDirs, as host directories owned by uid 10001.
for d in data w1-cache w1-work w2-cache w2-work; do
  mkdir -p "$dir/$d" && chown 10001 "$dir/$d" && chmod 0700 "$dir/$d"
done
port=$(free_port)
mport=$(free_port)
echo "arb_$(openssl rand -hex 32)" >"$dir/admin.token"
cp "$dir/admin.token" "$dir/client.token"
chmod 0600 "$dir/client.token"
secret_file "$dir/admin.token"
podman run "${run[@]}" -d --name "$coord" --network "$net" \
  -p "127.0.0.1:$port:50051" -p "127.0.0.1:$mport:9090" \
  --read-only -v "$dir/data:/data" --tmpfs /tmp:rw,mode=1777 \
  -v "$dir/admin.token:/secrets/admin/token:ro" \
  "$image" coordinator --listen :50051 --metrics :9090 --data /data \
  --admin-token-file /secrets/admin/token >/dev/null
c=(--token-file "$dir/client.token")
until_ok 60 "$cli" "${c[@]}" whoami --coordinator "127.0.0.1:$port" || fail "coordinator not answering"
ok "coordinator container answers on the published port 127.0.0.1:$port"
[[ $(podman exec "$coord" id -u) == 10001 ]] || fail "coordinator not running as uid 10001"
if podman exec "$coord" touch /probe 2>/dev/null; then fail "root filesystem writable"; fi
ok "coordinator runs as uid 10001 on a read-only root filesystem"
for w in w1 w2; do
  "$cli" "${c[@]}" tokens create --name "$w" --role worker --coordinator "127.0.0.1:$port" |
    head -1 >"$dir/$w.token"
  secret_file "$dir/$w.token"
  podman run "${run[@]}" -d --name "arbiter-$w-$id" --network "$net" --read-only \
    -v "$dir/$w-cache:/cache" -v "$dir/$w-work:/work" -e TMPDIR=/work \
    -v "$dir/$w.token:/secrets/worker/token:ro" \
    "$image" --token-file /secrets/worker/token worker --coordinator "$coord:50051" \
    --threads 1 --hash 64 --metrics :9091 --cache /cache --sandbox auto --name "$w" >/dev/null
done
workers() { curl -sf "http://127.0.0.1:$mport/metrics" | awk '$1 == "arbiter_workers_connected" {print $2}'; }
until_ok 60 bash -c "[[ \$(curl -sf http://127.0.0.1:$mport/metrics | awk '\$1 == \"arbiter_workers_connected\" {print \$2}') == 2 ]]" ||
  fail "the two worker containers did not connect (connected: $(workers))"
ok "two worker containers connected to $coord over the podman network"
nodes=$("$cli" "${c[@]}" perft --startpos --depth 6 --coordinator "127.0.0.1:$port" --json |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["nodes"])')
[[ "$nodes" == 119060324 ]] || fail "perft(6) = $nodes"
ok "perft(6) from the host through the published port = 119060324"
"$cli" "${c[@]}" match --coordinator "127.0.0.1:$port" --engine name=base,cmd=builtin \
  --engine name=weak,cmd=builtin,option.KnightValueMg=150 --tc depth=3 --games 40 --max-moves 120 \
  --sprt elo0=0,elo1=300 --pgn "$dir/games.pgn" --json --quiet >"$dir/match.json" ||
  fail "the match failed"
read -r games w d l < <(python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); s = r["stats"]["wdl"]
print(r["games"], s.get("wins", 0), s.get("draws", 0), s.get("losses", 0))' "$dir/match.json")
pgn_games=$(grep -c '^\[Result ' "$dir/games.pgn" || true)
((games > 0 && games == w + d + l && games == pgn_games)) ||
  fail "match: $games games, W/D/L $w/$d/$l, $pgn_games in the PGN"
if command -v pgn-extract >/dev/null; then
  checked=$(pgn-extract -s -r "$dir/games.pgn" 2>&1 | grep -ciE 'error|illegal' || true)
  ((checked == 0)) || fail "pgn-extract found errors in the PGN"
fi
ok "SPRT match: $games games (W $w, D $d, L $l), PGN read back with $pgn_games games, pgn-extract clean"

# podman kube play (Debian 12's podman 4.3): the coordinator as a Pod made from the dev overlay's
# StatefulSet and the workers' Deployment as rendered by `kubectl kustomize k8s/overlays/dev`,
# changed only where podman cannot follow (scripts/kube-play-yaml.py: no StatefulSet, no Secret
# volumes -> hostPath files, no TLS). A perft(5) run from inside the coordinator's Pod is exact.
if command -v kubectl >/dev/null; then
  kubectl kustomize k8s/overlays/dev >"$dir/dev.yaml"
  python3 scripts/kube-play-yaml.py coordinator "$dir/admin.token" - - "$image" <"$dir/dev.yaml" |
    sed "s/^  name: arbiter-coordinator$/  name: arbiter-coordinator-kube-$id/" >"$dir/coordinator-pod.yaml"
  kube_pods+=("arbiter-coordinator-kube-$id")
  podman kube play --network "$net" "$dir/coordinator-pod.yaml" >/dev/null
  kc="arbiter-coordinator-kube-$id-coordinator"
  in_kc=(podman exec "$kc" arbiter --token-file /secrets/admin/token)
  until_ok 60 "${in_kc[@]}" whoami --coordinator 127.0.0.1:50051 || fail "kube play: coordinator Pod not answering"
  [[ $(podman exec "$kc" id -u) == 10001 ]] || fail "kube play: coordinator not uid 10001"
  if podman exec "$kc" touch /probe 2>/dev/null; then fail "kube play: root filesystem writable"; fi
  infra=$(podman pod inspect "arbiter-coordinator-kube-$id" --format '{{.InfraContainerID}}')
  ip=$(podman inspect "$infra" --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}')
  ok "kube play: coordinator Pod up at $ip (uid 10001, read-only root filesystem)"
  "${in_kc[@]}" tokens create --name kube-workers --role worker --coordinator 127.0.0.1:50051 |
    head -1 >"$dir/kube-worker.token"
  secret_file "$dir/kube-worker.token"
  python3 scripts/kube-play-yaml.py worker - "$dir/kube-worker.token" "$ip:50051" "$image" \
    <"$dir/dev.yaml" | sed "s/^  name: arbiter-worker$/  name: arbiter-worker-kube-$id/" \
    >"$dir/worker-deployment.yaml"
  podman kube play --network "$net" "$dir/worker-deployment.yaml" >/dev/null
  mapfile -t wpods < <(podman pod ls --format '{{.Name}}' | grep "^arbiter-worker-kube-$id")
  kube_pods+=("${wpods[@]}")
  ok "kube play: worker Deployment played as ${#wpods[@]} pod(s): ${wpods[*]}"
  nodes=$(timeout 300 "${in_kc[@]}" perft --startpos --depth 5 --coordinator 127.0.0.1:50051 --json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["nodes"])') || fail "kube play: perft failed"
  [[ "$nodes" == 4865609 ]] || fail "kube play: perft(5) = $nodes"
  ok "kube play: perft(5) on the coordinator Pod with the Deployment's workers = 4865609"
else
  echo "image-test: kubectl not found: podman kube play part skipped"
fi
echo "image-test: $image passed"
