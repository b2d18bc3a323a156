//go:build tools

// Package tools pins the scheduler-plugins scheduler binary the coscheduling
// conformance test runs as a second oracle (hack/build-schedplugins.sh).
package tools

import _ "sigs.k8s.io/scheduler-plugins/cmd/scheduler"
