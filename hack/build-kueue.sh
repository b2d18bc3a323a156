#!/usr/bin/env bash
# build-kueue.sh builds the real Kueue controller manager (sigs.k8s.io/kueue,
# main package cmd/kueue, its webhooks included) from the Go module proxy, via
# the helper module hack/kueue, into a cache directory keyed by its version,
# with the CRDs and the webhook manifests of the same release beside it. It
# does nothing when they are already there. It prints the directory.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kueue_version=$(awk '$1 == "require" && $2 == "sigs.k8s.io/kueue" { print $3; exit }
  $1 == "sigs.k8s.io/kueue" { print $2; exit }' "$here/kueue/go.mod")
cache_root=${KUBECTL_GANG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-gang}
dir="$cache_root/kueue-$kueue_version"

if [[ -x "$dir/kueue" && -f "$dir/kueue-crds.yaml" && -f "$dir/kueue-webhooks.yaml" ]]; then
  echo "$dir"
  exit 0
fi

mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building the Kueue controller manager $kueue_version into $dir (once; about 6 minutes)" >&2
(
  cd "$here/kueue"
  export CGO_ENABLED=0
  go build -buildvcs=false -trimpath -ldflags=-s -o "$tmp/kueue" sigs.k8s.io/kueue/cmd/kueue
  src=$(go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)
  for f in "$src"/config/components/crd/bases/*.yaml; do
    echo "---"
    cat "$f"
  done >"$tmp/kueue-crds.yaml"
  cp "$src/config/components/webhook/manifests.yaml" "$tmp/kueue-webhooks.yaml"
)
chmod 644 "$tmp"/*.yaml
mv "$tmp"/kueue "$tmp"/kueue-crds.yaml "$tmp"/kueue-webhooks.yaml "$dir/"
echo "$dir"
