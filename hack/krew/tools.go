//go:build tools

// Package tools pins the commands this module builds; it is never compiled.
package tools

import (
	// kubectl-krew lets validate-krew-manifest install every platform of the
	// manifest, which is how the krew-index CI checks a plugin.
	_ "sigs.k8s.io/krew/cmd/krew"
	_ "sigs.k8s.io/krew/cmd/validate-krew-manifest"
)
