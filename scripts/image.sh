#!/usr/bin/env bash
# Builds the project's Dockerfile into arbiter:TAG with Debian's podman, no registry needed:
#   - the base image debian:12 (and debian:12-slim) is made once with
#     `debootstrap --variant=minbase bookworm` from the Debian mirror apt already uses, kept as
#     $ARBITER_CACHE/debian-12-minbase.tar and imported into podman's store;
#   - runc as the runtime and explicit ulimits (this host's cgroups make crun fail and the
#     default ulimits are refused), through a containers.conf in $ARBITER_CACHE.
# Prints the build time and the image size.
# Usage: scripts/image.sh [--prebuilt] [--variant build] [TAG]   (default TAG: dev)
#   --prebuilt  package this checkout's build/cli/arbiter (scripts/build.sh, on Debian 12) into
#               the Dockerfile's runtime stage instead of compiling in the image (about 1 min)
#   --variant build  the workers' build variant instead (the Dockerfile's build-worker stage:
#               the runtime plus build-essential and clang), tagged arbiter:TAG-build
# Environment: ARBITER_CACHE (default ~/.cache/arbiter), ARBITER_MARCH (build arg).
set -euo pipefail
cd "$(dirname "$0")/.."
prebuilt=0 variant=""
while [[ "${1:-}" == --* ]]; do
  case "$1" in
    --prebuilt) prebuilt=1; shift ;;
    --variant) [[ "${2:-}" == build ]] || { echo "image: --variant takes 'build'" >&2; exit 2; }
               variant=build; shift 2 ;;
    *) echo "image: unknown option $1" >&2; exit 2 ;;
  esac
done
tag="${1:-dev}${variant:+-$variant}"
cache="${ARBITER_CACHE:-$HOME/.cache/arbiter}"
mkdir -p "$cache"
scripts/install-deps.sh debootstrap podman buildah fuse-overlayfs uidmap slirp4netns runc \
  golang-github-containernetworking-plugin-dnsname catatonit python3-yaml >/dev/null
export CONTAINERS_CONF="$cache/containers.conf"
cat >"$CONTAINERS_CONF" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
CONF
if ! podman image exists debian:12; then
  base="$cache/debian-12-minbase.tar"
  if [[ ! -s "$base" ]]; then
    mirror=$(grep -rhoE 'https?://[^ ]*/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null |
             head -1 | tr -d ' ' || true)
    mirror="${mirror:-http://deb.debian.org/debian}"
    root=$(mktemp -d)
    echo "image: debootstrap --variant=minbase bookworm from $mirror (once)"
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
      { tail -20 "$cache/debootstrap.log"; exit 1; }
    tar -C "$root" -cf "$base.tmp" . && mv "$base.tmp" "$base"
    rm -rf "$root"
  fi
  podman import --change 'CMD ["bash"]' "$base" debian:12 >/dev/null
fi
podman image exists debian:12-slim || podman tag debian:12 debian:12-slim
start=$SECONDS
build=(podman build --runtime runc --ulimit nofile=20000:20000 --ulimit nproc=4096:4096
  --build-arg "VERSION=$(sed -n 's/^project(arbiter VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
  --build-arg "REVISION=$(git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)"
  --build-arg "SOURCE=$(git remote get-url origin 2>/dev/null || echo unknown)")
[[ -z "$variant" ]] || build+=(--target build-worker)
if ((prebuilt)); then
  [[ -x build/cli/arbiter ]] || { echo "image: no build/cli/arbiter: scripts/build.sh first" >&2; exit 2; }
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
  cp build/cli/arbiter "$ctx/"
  sed -n '/^FROM debian:12-slim/,$p' Dockerfile |
    sed 's#^COPY --from=build /src/build/cli/arbiter #COPY arbiter #' >"$ctx/Containerfile"
  "${build[@]}" -t "arbiter:$tag" "$ctx"
else
  "${build[@]}" ${ARBITER_MARCH:+--build-arg ARBITER_MARCH=$ARBITER_MARCH} -t "arbiter:$tag" .
fi
echo "image: arbiter:$tag built in $((SECONDS - start)) s, $(podman image inspect "arbiter:$tag" --format '{{.Size}}' |
  awk '{printf "%.0f MB", $1 / 1e6}')"
