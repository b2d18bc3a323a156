#!/usr/bin/env bash
# build-schedplugins.sh builds scheduler-plugins' kube-scheduler (the one that
# runs Coscheduling) from the Go module proxy into the same cache as
# build-k8s.sh, keyed by version. It does nothing when the binary is already
# there. It prints the binary's path.
#
# The helper module copies scheduler-plugins' replace block (Kubernetes 1.33
# staging modules); the checksum database does not answer for some of those
# versions here, so this build (tests only, never the product) runs with
# GOSUMDB=off and the checksums recorded in hack/schedplugins/go.sum.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(awk '$1 == "require" && $2 == "sigs.k8s.io/scheduler-plugins" { print $3; exit }
  $1 == "sigs.k8s.io/scheduler-plugins" { print $2; exit }' "$here/schedplugins/go.mod")
cache_root=${KUBECTL_GANG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-gang}
dir="$cache_root/scheduler-plugins-$version"
bin="$dir/kube-scheduler"

if [[ -x "$bin" ]]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building scheduler-plugins $version (Coscheduling) into $dir (once; about 3 minutes)" >&2
(
  cd "$here/schedplugins"
  export CGO_ENABLED=0 GOSUMDB=off GOFLAGS=-mod=mod
  go build -buildvcs=false -trimpath -ldflags=-s -o "$tmp/kube-scheduler" sigs.k8s.io/scheduler-plugins/cmd/scheduler
)
mv "$tmp/kube-scheduler" "$bin"
echo "$bin"
