// Package kubectlgang holds files embedded in the kubectl-gang binary.
package kubectlgang

import _ "embed"

// DefaultProfileYAML is plugins.yaml: kube-scheduler v1.37's default profile
// as a KubeSchedulerConfiguration.
//
//go:embed plugins.yaml
var DefaultProfileYAML []byte
