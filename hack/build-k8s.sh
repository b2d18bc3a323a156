#!/usr/bin/env bash
# build-k8s.sh builds the real etcd, kube-apiserver and kube-scheduler the tests
# run against, from the Go module proxy, into a cache directory keyed by version.
# It does nothing when the binaries are already there. It prints the directory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
k8s_version=$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$here/k8s/go.mod")
etcd_version=$(awk '$1 == "go.etcd.io/etcd/server/v3" { print $2; exit }' "$here/k8s/go.mod")
cache_root=${KUBECTL_GANG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-gang}
dir="$cache_root/k8s-$k8s_version-etcd-$etcd_version"

# The binaries report their release (-X version stamps, as Kubernetes'
# release build sets them): Kueue's controller manager refuses to start
# against an apiserver whose /version is not a release version.
minor=${k8s_version#v1.}
minor=${minor%%.*}
stamp="-s -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"

if [[ -x "$dir/etcd" && -x "$dir/kube-apiserver" && -x "$dir/kube-scheduler" ]]; then
  if "$dir/kube-apiserver" --version 2>/dev/null | grep -qx "Kubernetes $k8s_version"; then
    echo "$dir"
    exit 0
  fi
  # A cache from before the stamp: only kube-apiserver is built again.
  echo "stamping kube-apiserver $k8s_version in $dir (once; about 3 minutes)" >&2
  tmp=$(mktemp -d "$dir/.build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  (cd "$here/k8s" && CGO_ENABLED=0 go build -buildvcs=false -trimpath -ldflags="$stamp" -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$tmp/kube-apiserver" "$dir/"
  echo "$dir"
  exit 0
fi

mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building kube-apiserver, kube-scheduler $k8s_version and etcd $etcd_version into $dir (once; about 5 minutes)" >&2
(
  cd "$here/k8s"
  export CGO_ENABLED=0
  go build -buildvcs=false -trimpath -ldflags="$stamp" -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
  go build -buildvcs=false -trimpath -ldflags="$stamp" -o "$tmp/kube-scheduler" k8s.io/kubernetes/cmd/kube-scheduler
  go build -buildvcs=false -trimpath -ldflags=-s -o "$tmp/etcd" go.etcd.io/etcd/server/v3
)
mv "$tmp"/etcd "$tmp"/kube-apiserver "$tmp"/kube-scheduler "$dir/"
echo "$dir"
