#!/usr/bin/env bash
# release.sh cross-compiles kubectl-gang and packs one archive per platform,
# the way .krew.yaml expects to find them on the GitHub release:
#
#   kubectl-gang_${VERSION}_${os}_${arch}.tar.gz         (binary, LICENSE and, except on windows, kubectl_complete-gang at the root)
#   kubectl-gang_${VERSION}_${os}_${arch}.tar.gz.sha256  ("<hex>  <archive name>")
#
# Usage: hack/release.sh VERSION [OUTDIR]   (VERSION like v0.1.0; OUTDIR defaults to dist)
#
# GO names the go command to build with (default go). Archives are
# byte-for-byte reproducible with GNU tar: entries carry the time of
# SOURCE_DATE_EPOCH (default: the last commit), owner 0 and fixed modes.
set -euo pipefail

# The platforms krew users can install; .krew.yaml has one entry for each, and
# test/krew checks that the two lists agree.
platforms=(
  linux/amd64
  linux/arm64
  darwin/amd64
  darwin/arm64
  windows/amd64
)

usage() {
  echo "usage: $0 VERSION [OUTDIR]" >&2
  exit 2
}

[[ $# -ge 1 && $# -le 2 ]] || usage
version=$1
# krew refuses a manifest whose version is not semver with a leading v.
if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]*)?$ ]]; then
  echo "release.sh: version $version is not of the form vMAJOR.MINOR.PATCH" >&2
  exit 2
fi
outdir=${2:-dist}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
go=${GO:-go}

if [[ -z "${SOURCE_DATE_EPOCH:-}" ]]; then
  SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
fi

tar=tar
command -v gtar >/dev/null 2>&1 && tar=gtar
if "$tar" --version 2>/dev/null | grep -q 'GNU tar'; then
  tar_flags=(--format=gnu --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner)
else
  echo "release.sh: $tar is not GNU tar; the archives will not be reproducible" >&2
  tar_flags=()
fi

if command -v sha256sum >/dev/null 2>&1; then
  sha256=(sha256sum)
else
  sha256=(shasum -a 256)
fi

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

cd "$root"
for platform in "${platforms[@]}"; do
  os=${platform%/*}
  arch=${platform#*/}
  bin=kubectl-gang
  [[ "$os" == windows ]] && bin=kubectl-gang.exe
  archive="kubectl-gang_${version}_${os}_${arch}.tar.gz"
  dir="$stage/${os}_${arch}"
  mkdir -p "$dir"

  echo "building $archive" >&2
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch "$go" build -trimpath \
    -ldflags "-s -w -X github.com/kubectl-gang/kubectl-gang/pkg/version.Version=$version" \
    -o "$dir/$bin" ./cmd/kubectl-gang
  cp LICENSE "$dir/LICENSE"
  chmod 0755 "$dir/$bin"
  chmod 0644 "$dir/LICENSE"
  members=(LICENSE "$bin")
  # The completion helper kubectl runs for `kubectl gang <TAB>` is a shell
  # script, so it ships for the Unix platforms only.
  if [[ "$os" != windows ]]; then
    cp kubectl_complete-gang "$dir/kubectl_complete-gang"
    chmod 0755 "$dir/kubectl_complete-gang"
    members+=(kubectl_complete-gang)
  fi

  "$tar" ${tar_flags[@]+"${tar_flags[@]}"} -C "$dir" -cf - "${members[@]}" | gzip -n -9 >"$outdir/$archive"
  (cd "$outdir" && "${sha256[@]}" "$archive" >"$archive.sha256")
  echo "$outdir/$archive"
done
