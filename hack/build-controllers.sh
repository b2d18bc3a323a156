#!/usr/bin/env bash
# build-controllers.sh builds the workload controllers the exclusive-placement
# integration tests run: kube-controller-manager (its Job controller), from the
# helper module hack/k8s, and the JobSet controller (sigs.k8s.io/jobset, its
# webhooks included), from hack/jobset, both from the Go module proxy, into a
# cache directory keyed by their versions, with the JobSet CRD and webhook
# manifests of the same release beside them. It does nothing when they are
# already there. It prints the directory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
k8s_version=$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$here/k8s/go.mod")
jobset_version=$(awk '$1 == "require" && $2 == "sigs.k8s.io/jobset" { print $3; exit }
  $1 == "sigs.k8s.io/jobset" { print $2; exit }' "$here/jobset/go.mod")
cache_root=${KUBECTL_GANG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-gang}
dir="$cache_root/controllers-k8s-$k8s_version-jobset-$jobset_version"

if [[ -x "$dir/kube-controller-manager" && -x "$dir/jobset-controller" && -f "$dir/jobset-crd.yaml" && -f "$dir/jobset-webhooks.yaml" ]]; then
  echo "$dir"
  exit 0
fi

mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building kube-controller-manager $k8s_version and the JobSet controller $jobset_version into $dir (once; about 5 minutes)" >&2
(
  cd "$here/k8s"
  export CGO_ENABLED=0
  go build -buildvcs=false -trimpath -ldflags=-s -o "$tmp/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager
)
(
  cd "$here/jobset"
  export CGO_ENABLED=0
  go build -buildvcs=false -trimpath -ldflags=-s -o "$tmp/jobset-controller" sigs.k8s.io/jobset
  src=$(go list -m -f '{{.Dir}}' sigs.k8s.io/jobset)
  cp "$src/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml" "$tmp/jobset-crd.yaml"
  cp "$src/config/components/webhook/manifests.yaml" "$tmp/jobset-webhooks.yaml"
)
chmod 644 "$tmp"/*.yaml
mv "$tmp"/kube-controller-manager "$tmp"/jobset-controller "$tmp"/jobset-crd.yaml "$tmp"/jobset-webhooks.yaml "$dir/"
echo "$dir"
