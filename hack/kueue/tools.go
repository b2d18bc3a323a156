//go:build tools

// Package tools pins the commands this module builds; it is never compiled.
package tools

import (
	_ "sigs.k8s.io/kueue/cmd/kueue"
)
