#!/usr/bin/env bash
# verify.sh runs the checks a change must pass before it lands: formatting,
# go vet, staticcheck, a tidy go.mod, and the pure-core rule (pkg/schedule never depends on
# client-go).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail=0
unformatted=$(gofmt -l $(git ls-files '*.go'; git ls-files --others --exclude-standard '*.go') 2>/dev/null || true)
if [[ -n "$unformatted" ]]; then
  echo "gofmt would change:" $unformatted >&2
  fail=1
fi

go vet ./...
# staticcheck, pinned, from the Go module proxy (cached after the first run).
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

for mod in . hack/k8s hack/krew hack/schedplugins hack/jobset; do
  [[ -f "$mod/go.mod" ]] || continue
  before=$(cat "$mod/go.mod" "$mod/go.sum")
  # hack/schedplugins pins Kubernetes 1.33 staging versions the checksum
  # database does not answer for here (see hack/build-schedplugins.sh).
  if [[ $mod == hack/schedplugins ]]; then
    (cd "$mod" && GOSUMDB=off GOFLAGS=-mod=mod go mod tidy)
  else
    (cd "$mod" && go mod tidy)
  fi
  if [[ "$before" != "$(cat "$mod/go.mod" "$mod/go.sum")" ]]; then
    echo "$mod: go mod tidy changed go.mod or go.sum; commit the result" >&2
    fail=1
  fi
done

if go list -deps ./pkg/schedule/... | grep -q '^k8s.io/client-go'; then
  echo "pkg/schedule depends on client-go; the core must stay pure" >&2
  go list -deps ./pkg/schedule/... | grep '^k8s.io/client-go' | head -5 >&2
  fail=1
fi
if go list -deps ./... | grep -q '^k8s.io/kubernetes'; then
  echo "the product module depends on k8s.io/kubernetes; read its code, do not import it" >&2
  fail=1
fi

exit $fail
