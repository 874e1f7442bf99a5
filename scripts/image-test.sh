#!/usr/bin/env bash
# Plays the shipped deployment: both Kubernetes overlays (dev, production) as `kubectl kustomize`
# renders them, run by podman's `kube play` with the image built by scripts/image.sh, changed only
# where podman cannot follow (scripts/kube-play-yaml.py lists each change). In the played pods,
# as a user from outside would, through the coordinator Pod's address:
#   - every container stays up and answers: coordinator gRPC, its gRPC health port, the
#     dashboard, /metrics (arbiter_build_info); each worker's health port; both workers registered
#     with engine isolation that confines engines (landlock or namespaces, never limits only);
#   - perft(6) exact, a --verify perft(5) exact (two pods sharing one worker token);
#   - a builtin-engine SPRT match; an uploaded-engine match submitted by a submitter token, which
#     completes; a game with path=/usr/games/stockfish; every PGN read by pgn-extract;
#   - the workers (the build variant, TAG-build) build an engine from source in their box and
#     play it, and a tree that does not compile fails its run with the compiler's error;
#   - a hostile engine inside a worker pod stays in its box (files, network, daemon, ptrace).
# Before that: a worker whose token and CA files are missing exits non-zero naming them.
# Usage: scripts/image-test.sh [TAG]   (default dev; build both images with scripts/image.sh
# [--prebuilt] TAG and scripts/image.sh [--prebuilt] --variant build TAG)
# Environment: ARBITER (the host's CLI, default build/cli/arbiter), ARBITER_CACHE, OVERLAYS
# (default "dev production"). A missing tool is a failure, not a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-dev}"
image="localhost/arbiter:$tag"
cache="${ARBITER_CACHE:-$HOME/.cache/arbiter}"
export CONTAINERS_CONF="$cache/containers.conf"
cli="${ARBITER:-$PWD/build/cli/arbiter}"
hostile="${HOSTILE_ENGINE:-$PWD/build/tests/fake_engines/arbiter_fake_uci_engine}"
pgn_extract=/usr/games/pgn-extract
pods=()
dump_logs() {
  for p in "${pods[@]}"; do
    for c in $(podman ps -a --pod --filter "pod=$p" --format '{{.Names}}' 2>/dev/null | grep -v infra); do
      echo "--- $c:" >&2; podman logs --tail 20 "$c" >&2 || true
    done
  done
}
fail() { echo "image-test: FAILED: $*" >&2; dump_logs; exit 1; }
for tool in podman kubectl python3 curl openssl "$pgn_extract"; do
  command -v "$tool" >/dev/null || fail "$tool not found (scripts/image.sh installs podman; apt-get install pgn-extract)"
done
python3 -c 'import yaml' 2>/dev/null || fail "python3-yaml not found"
[[ -x "$cli" ]] || fail "no $cli (scripts/build.sh first, or ARBITER=...)"
[[ -x "$hostile" ]] || fail "no hostile test engine $hostile (scripts/build.sh builds it)"
podman image exists "$image" || fail "no image $image (scripts/image.sh $tag)"
podman image exists "$image-build" || fail "no image $image-build (scripts/image.sh --variant build $tag)"
id=$$
net="arbiter-test-$id"
dir=$(mktemp -d)
chmod 0755 "$dir"
cleanup() {
  for p in "${pods[@]}"; do podman pod rm -f -t 5 "$p" >/dev/null 2>&1 || true; done
  for v in $(podman volume ls --format '{{.Name}}' | grep -- "-$id\$" || true); do
    podman volume rm -f "$v" >/dev/null 2>&1 || true
  done
  podman network rm -f "$net" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
ok() { echo "image-test: ok: $*"; }
# Polls "$@" until it succeeds, at most $deadline seconds.
until_ok() { local deadline=$1; shift; local end=$((SECONDS + deadline));
  until "$@" >/dev/null 2>&1; do ((SECONDS < end)) || return 1; sleep 0.5; done; }
secret_file() { chown 10001:10001 "$1"; chmod 0400 "$1"; }  # readable by the pods' user only
pod_ip() {
  local infra; infra=$(podman pod inspect "$1" --format '{{.InfraContainerID}}')
  podman inspect "$infra" --format '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}'
}
json_field() { python3 -c 'import json, sys; r = json.load(sys.stdin)
for k in sys.argv[1].split("."): r = r[k]
print(r)' "$1"; }

podman network create "$net" >/dev/null
echo "image-test: $image: $(podman run --rm "$image" --version)"

# A worker whose Secrets are missing stops at once and says which file (a CrashLoopBackOff that
# names the Secret), instead of dialling the coordinator in plaintext.
set +e
out=$(timeout 30 podman run --rm --read-only "$image" --token-file /secrets/worker/token \
  --tls-ca /secrets/tls/ca.crt worker --coordinator 127.0.0.1:1 2>&1)
rc=$?
set -e
((rc != 0 && rc != 124)) || fail "a worker without its token file ran on (exit $rc): $out"
grep -q "/secrets/worker/token" <<<"$out" || fail "the worker's error does not name its token file: $out"
ok "a worker without its token and CA files exits $rc: $(head -1 <<<"$out")"

play_overlay() {
  local overlay=$1 rendered="$dir/$1.yaml" cpod="arbiter-coordinator-$1-$id"
  kubectl kustomize "k8s/overlays/$overlay" >"$rendered"
  echo "arb_$(openssl rand -hex 32)" >"$dir/$overlay-admin.token"
  cp "$dir/$overlay-admin.token" "$dir/$overlay-client.token"
  chmod 0600 "$dir/$overlay-client.token"
  secret_file "$dir/$overlay-admin.token"
  python3 scripts/kube-play-yaml.py coordinator "$dir/$overlay-admin.token" - - "$image" \
    "$overlay-$id" <"$rendered" |
    sed "s/^  name: arbiter-coordinator$/  name: $cpod/" >"$dir/$overlay-coordinator.yaml"
  pods+=("$cpod")
  podman kube play --network "$net" "$dir/$overlay-coordinator.yaml" >/dev/null
  local ip; ip=$(pod_ip "$cpod")
  local addr="$ip:50051"
  local c=("$cli" --token-file "$dir/$overlay-client.token")
  until_ok 90 "${c[@]}" whoami --coordinator "$addr" || fail "$overlay: coordinator Pod not answering at $addr"
  local kc="$cpod-coordinator"
  [[ $(podman exec "$kc" id -u) == 10001 ]] || fail "$overlay: coordinator not uid 10001"
  if podman exec "$kc" touch /probe 2>/dev/null; then fail "$overlay: root filesystem writable"; fi
  "$cli" health "$ip:8081" >/dev/null || fail "$overlay: coordinator gRPC health port 8081 not SERVING"
  # Read whole, then searched: grep -q closing the pipe early would fail curl under pipefail.
  local page; page=$(curl -sf "http://$ip:8080/signin") || fail "$overlay: dashboard on :8080 not answering"
  grep -qi "<html" <<<"$page" || fail "$overlay: the dashboard's sign-in page is not HTML"
  page=$(curl -sf "http://$ip:9090/metrics") || fail "$overlay: metrics on :9090 not answering"
  grep -q '^arbiter_build_info{' <<<"$page" || fail "$overlay: no arbiter_build_info on :9090/metrics"
  ok "$overlay: coordinator Pod up at $ip (uid 10001, read-only root): gRPC :50051, health :8081 SERVING, dashboard :8080, metrics :9090"

  # One worker token for the whole Deployment (as the manifests' Secret), and a submitter.
  "${c[@]}" tokens create --name "$overlay-workers" --role worker --coordinator "$addr" |
    head -1 >"$dir/$overlay-worker.token"
  secret_file "$dir/$overlay-worker.token"
  "${c[@]}" tokens create --name "$overlay-dev" --role submitter --coordinator "$addr" |
    head -1 >"$dir/$overlay-submitter.token"
  python3 scripts/kube-play-yaml.py worker - "$dir/$overlay-worker.token" "$addr" "$image" \
    "$overlay-$id" <"$rendered" | sed "s/^  name: arbiter-worker$/  name: arbiter-worker-$overlay-$id/" \
    >"$dir/$overlay-worker.yaml"
  podman kube play --network "$net" "$dir/$overlay-worker.yaml" >/dev/null
  local wpods; mapfile -t wpods < <(podman pod ls --format '{{.Name}}' | grep "^arbiter-worker-$overlay-$id")
  pods+=("${wpods[@]}")
  ((${#wpods[@]} == 2)) || fail "$overlay: the worker Deployment played as ${#wpods[@]} pods, not 2"
  workers_up() { [[ $("${c[@]}" workers --coordinator "$addr" 2>/dev/null | grep -c "^arbiter-worker") == 2 ]]; }
  until_ok 90 workers_up || fail "$overlay: the two worker pods did not register"
  local table; table=$("${c[@]}" workers --coordinator "$addr")
  echo "$table" | sed "s/^/image-test:   /"
  local confined; confined=$(grep "^arbiter-worker" <<<"$table" | grep -cE ' (landlock|namespaces) ' || true)
  ((confined == 2)) || fail "$overlay: workers do not confine engines (isolation above)"
  for p in "${wpods[@]}"; do
    "$cli" health "$(pod_ip "$p"):8081" >/dev/null || fail "$overlay: worker $p health port 8081 not SERVING"
  done
  ok "$overlay: 2 worker pods registered with one token, isolation $(grep "^arbiter-worker" <<<"$table" | awk '{print $7}' | sort -u | tr '\n' ' ')and health :8081 SERVING"

  local nodes
  nodes=$(timeout 300 "${c[@]}" perft --startpos --depth 6 --coordinator "$addr" --json | json_field nodes) ||
    fail "$overlay: perft failed"
  [[ "$nodes" == 119060324 ]] || fail "$overlay: perft(6) = $nodes"
  ok "$overlay: perft(6) = 119060324"
  nodes=$(timeout 300 "${c[@]}" perft --startpos --depth 5 --verify --coordinator "$addr" --json | json_field nodes) ||
    fail "$overlay: perft --verify failed"
  [[ "$nodes" == 4865609 ]] || fail "$overlay: verified perft(5) = $nodes"
  ok "$overlay: perft(5) --verify = 4865609 (every job counted by both pods)"

  "${c[@]}" match --coordinator "$addr" --engine name=base,cmd=builtin \
    --engine name=weak,cmd=builtin,option.KnightValueMg=150 --tc depth=3 --games 40 --max-moves 120 \
    --sprt elo0=0,elo1=300 --pgn "$dir/$overlay-sprt.pgn" --json --quiet >"$dir/$overlay-sprt.json" ||
    fail "$overlay: the SPRT match failed"
  local games; games=$(json_field games <"$dir/$overlay-sprt.json")
  ((games > 0 && games == $(grep -c '^\[Result ' "$dir/$overlay-sprt.pgn"))) || fail "$overlay: SPRT games $games"
  ok "$overlay: builtin SPRT match: $games games, PGN with $games games"

  # A submitter's own engine, uploaded from this host: it runs only on workers that confine it.
  "$cli" --token-file "$dir/$overlay-submitter.token" match --coordinator "$addr" \
    --engine name=sf-upload,cmd=upload:/usr/games/stockfish --engine name=base,cmd=builtin \
    --tc depth=5 --games 4 --max-moves 100 --pgn "$dir/$overlay-upload.pgn" --json --quiet \
    >"$dir/$overlay-upload.json" || fail "$overlay: the uploaded-engine match failed"
  games=$(json_field games <"$dir/$overlay-upload.json")
  ((games == 4)) || fail "$overlay: uploaded-engine match played $games games"
  ok "$overlay: uploaded-engine match by a submitter token: 4 games"

  "${c[@]}" match --coordinator "$addr" --engine name=stockfish,cmd=/usr/games/stockfish \
    --engine name=base,cmd=builtin --tc depth=5 --games 2 --max-moves 100 \
    --pgn "$dir/$overlay-stockfish.pgn" --json --quiet >"$dir/$overlay-stockfish.json" ||
    fail "$overlay: the path=/usr/games/stockfish match failed"
  grep -qE '^\[(White|Black) "stockfish"\]' "$dir/$overlay-stockfish.pgn" ||
    fail "$overlay: no stockfish game in the PGN"
  ok "$overlay: /usr/games/stockfish of the image played $(json_field games <"$dir/$overlay-stockfish.json") games"

  # Source engines: each worker pod builds the tree for its own CPU with the build variant's
  # toolchain, in the engine box; a tree that does not compile fails with the compiler's words.
  builds=$(grep "^arbiter-worker" <<<"$table" | grep -c "builds: yes" || true)
  ((builds == 2)) || fail "$overlay: the workers do not offer builds (the build variant's toolchain)"
  "$cli" --token-file "$dir/$overlay-submitter.token" match --coordinator "$addr" \
    --engine name=tiny,source=tests/data/source_engines/good --engine name=base,cmd=builtin \
    --tc depth=3 --games 4 --max-moves 100 --pgn "$dir/$overlay-source.pgn" --json --quiet \
    >"$dir/$overlay-source.json" || fail "$overlay: the source-engine match failed"
  games=$(json_field games <"$dir/$overlay-source.json")
  ((games == 4)) || fail "$overlay: the source-engine match played $games games"
  grep -qE '^\[(White|Black) "tiny"\]' "$dir/$overlay-source.pgn" || fail "$overlay: no game of tiny in the PGN"
  local built=0
  for p in "${wpods[@]}"; do
    if podman logs "$p-worker" 2>&1 | grep -q "built source"; then built=$((built + 1)); fi
  done
  ((built >= 1)) || fail "$overlay: no worker pod logged a build"
  local broken
  if broken=$("$cli" --token-file "$dir/$overlay-submitter.token" match --coordinator "$addr" \
      --engine name=broken,source=tests/data/source_engines/broken --engine name=base,cmd=builtin \
      --tc depth=3 --games 2 --quiet 2>&1); then
    fail "$overlay: a tree that does not compile played: $broken"
  fi
  grep -q "undeclared" <<<"$broken" || fail "$overlay: the failed build's message lacks the compiler's error: $broken"
  ok "$overlay: source engine built on $built worker pod(s) and played 4 games; a broken tree failed: $(grep -o "'[a-z_]*' undeclared" <<<"$broken" | head -1)"

  for f in sprt upload stockfish source; do
    local pgn="$dir/$overlay-$f.pgn" errors
    errors=$("$pgn_extract" -s -r "$pgn" 2>&1 | grep -ciE 'error|illegal|unknown' || true)
    ((errors == 0)) || fail "$overlay: pgn-extract found errors in $f.pgn: $("$pgn_extract" -s -r "$pgn" 2>&1 | head -5)"
  done
  ok "$overlay: pgn-extract -r read every PGN without an error"

  hostile_probe "${wpods[0]}-worker"
  for p in "${wpods[@]}" "$cpod"; do podman pod rm -f -t 5 "$p" >/dev/null 2>&1; done
  for v in $(podman volume ls --format '{{.Name}}' | grep -- "-$overlay-$id\$" || true); do
    podman volume rm -f "$v" >/dev/null
  done
}

# The hostile test engine, copied into a played worker pod's writable emptyDir, under the box the
# worker itself chose (--sandbox auto, as the manifest says): each attempt must fail there.
hostile_probe() {
  local w=$1 marker="hostile-$id"
  podman cp "$hostile" "$w:/work/hostile-engine"
  local out
  out=$(podman exec "$w" arbiter engine-probe --sandbox auto -- /work/hostile-engine \
    --read /secrets/worker/token --write-outside /cache/owned --connect 8081 \
    --daemon "$marker" --syscalls 2>&1) || fail "hostile probe did not run: $out"
  echo "$out" | sed "s/^/image-test:   /"
  grep -q "^isolation: \(landlock\|namespaces\)" <<<"$out" || fail "hostile probe: not confined"
  for action in read write-outside connect ptrace; do
    grep -q "^info string $action failed" <<<"$out" || fail "hostile probe: $action was not refused"
  done
  if podman exec "$w" test -e /cache/owned; then fail "hostile probe: a file appeared outside its directory"; fi
  # "[h]ostile-ID" finds the daemon's command line, not this grep's own.
  local left; left=$(podman exec "$w" bash -c "grep -l '[h]ostile-$id' /proc/[0-9]*/cmdline" 2>/dev/null || true)
  [[ -z "$left" ]] || fail "hostile probe: the engine's daemon outlived it: $left"
  ok "hostile engine in $w: token read, write outside, TCP connect, ptrace refused; no daemon left"
}

echo "image-test: what podman cannot follow, changed in the rendered YAML:"
python3 -c 'import ast, re
doc = ast.get_docstring(ast.parse(open("scripts/kube-play-yaml.py").read()))
items = doc.split("whole\nlist")[1].split("Usage:")[0]
for item in re.split(r"\n\s*- ", items)[1:]:
    print("image-test:   - " + " ".join(item.split()))'
for overlay in ${OVERLAYS:-dev production}; do
  start=$SECONDS
  play_overlay "$overlay"
  echo "image-test: overlay $overlay played in $((SECONDS - start)) s"
done
echo "image-test: $image passed"
