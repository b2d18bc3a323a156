#!/usr/bin/env bash
# build-krew-validator.sh builds krew's validate-krew-manifest, and the
# kubectl-krew it shells out to when it test-installs every platform of a
# manifest, from the Go module proxy into a cache directory keyed by version.
# It does nothing when the binaries are already there. It prints the path of
# validate-krew-manifest; kubectl-krew sits next to it.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
krew_version=$(awk '
  $1 == "require" && $2 == "sigs.k8s.io/krew" { print $3; exit }
  $1 == "sigs.k8s.io/krew" { print $2; exit }' "$here/krew/go.mod")
[[ -n "$krew_version" ]] || { echo "no sigs.k8s.io/krew requirement in $here/krew/go.mod" >&2; exit 1; }
cache_root=${KUBECTL_GANG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubectl-gang}
dir="$cache_root/krew-$krew_version"

if [[ -x "$dir/validate-krew-manifest" && -x "$dir/kubectl-krew" ]]; then
  echo "$dir/validate-krew-manifest"
  exit 0
fi

mkdir -p "$dir"
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "building validate-krew-manifest and kubectl-krew $krew_version into $dir (once; under a minute)" >&2
(
  cd "$here/krew"
  export CGO_ENABLED=0 GOFLAGS=-mod=mod
  go build -trimpath -ldflags=-s -o "$tmp/validate-krew-manifest" sigs.k8s.io/krew/cmd/validate-krew-manifest
  go build -trimpath -ldflags=-s -o "$tmp/kubectl-krew" sigs.k8s.io/krew/cmd/krew
)
mv "$tmp"/validate-krew-manifest "$tmp"/kubectl-krew "$dir/"
echo "$dir/validate-krew-manifest"
