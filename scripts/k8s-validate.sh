#!/usr/bin/env bash
# Renders the Kubernetes manifests (`kubectl kustomize` of k8s/ and of every overlay) and
# validates every object offline against the schemas of the pinned npm packages in
# k8s/validate/package.json (kubernetes-models 5.1.0, @kubernetes-models/prometheus-operator
# 6.0.0, @kubernetes-models/keda 2.0.0), installed once with `npm ci` from the committed
# package-lock.json into $ARBITER_CACHE (default ~/.cache/arbiter)/k8s-validate. First a
# self-test: a manifest with a wrong field type and one of an unknown kind must be refused.
# Needs kubectl (kustomize only: no cluster) and node/npm. Usage: scripts/k8s-validate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in kubectl node npm; do
  command -v "$tool" >/dev/null || { echo "k8s-validate: $tool not found" >&2; exit 2; }
done
cache="${ARBITER_CACHE:-$HOME/.cache/arbiter}/k8s-validate"
mkdir -p "$cache"
if ! cmp -s k8s/validate/package-lock.json "$cache/package-lock.json" || [[ ! -d "$cache/node_modules" ]]; then
  cp k8s/validate/package.json k8s/validate/package-lock.json "$cache/"
  (cd "$cache" && npm ci --no-audit --no-fund --loglevel=error)
fi
cp k8s/validate/validate.mjs "$cache/"
validate() { node "$cache/validate.mjs" "$1"; }
# Self-test: the validator refuses what a cluster would refuse.
broken=$(kubectl kustomize k8s | sed 's/containerPort: 9091/containerPort: "metrics"/')
if validate self-test-type <<<"$broken" 2>/dev/null; then
  echo "k8s-validate: self-test failed: a string containerPort was accepted" >&2; exit 1
fi
if validate self-test-kind <<<$'apiVersion: apps/v1\nkind: Deploymnet\nmetadata: {name: x}' 2>/dev/null; then
  echo "k8s-validate: self-test failed: an unknown kind was accepted" >&2; exit 1
fi
status=0
for dir in k8s k8s/overlays/*/; do
  dir=${dir%/}
  kubectl kustomize "$dir" | validate "$dir" || status=1
done
exit $status
